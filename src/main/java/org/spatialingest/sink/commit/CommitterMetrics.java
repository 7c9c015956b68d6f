package org.spatialingest.sink.commit;

import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.spatialingest.sink.core.SinkFieldTotals;

/**
 * The committer's metrics, in group {@code spatialSink}: what it committed, how long a commit took,
 * and how old the rows were at commit (a histogram, rows weighted by their ingest second).
 */
final class CommitterMetrics {
  /**
   * values the age histogram keeps; a commit feeds at most this many (rows weighted by their ingest
   * second)
   */
  private static final int AGE_WINDOW = 4096;

  private final Counter committedFiles;
  private final Counter committedBytes;
  private final Counter committedRows;
  private final Counter commits;
  private final Histogram rowAgeAtCommit;
  private volatile long lastCommitDurationMs;
  private volatile long lastCommitMillis;
  private volatile long lastMaxRowAgeMs;
  private volatile long lastMinRowAgeMs;

  CommitterMetrics(MetricGroup parent) {
    MetricGroup group = parent.addGroup("spatialSink");
    committedFiles = group.counter("committedFiles");
    committedBytes = group.counter("committedBytes");
    committedRows = group.counter("committedRows");
    commits = group.counter("commits");
    group.gauge("commitDurationMs", () -> lastCommitDurationMs);
    group.gauge(
        "timeSinceLastCommitMs",
        () -> lastCommitMillis == 0 ? 0L : System.currentTimeMillis() - lastCommitMillis);
    group.gauge("maxRowAgeAtCommitMs", () -> lastMaxRowAgeMs);
    group.gauge("minRowAgeAtCommitMs", () -> lastMinRowAgeMs);
    rowAgeAtCommit =
        group.histogram(
            "rowAgeAtCommitMs",
            new StatisticsPerUpdateHistogram(new DescriptiveStatisticsHistogram(AGE_WINDOW)));
  }

  /** {@code files} data files of {@code bytes} and {@code rows} committed to a table. */
  void filesCommitted(int files, long bytes, long rows) {
    committedFiles.inc(files);
    committedBytes.inc(bytes);
    committedRows.inc(rows);
  }

  /**
   * A batch of {@code files} committed (to at least one table) from {@code startMillis} to {@code
   * endMillis}.
   */
  void batchCommitted(SinkFieldTotals files, long startMillis, long endMillis) {
    lastCommitDurationMs = endMillis - startMillis;
    lastCommitMillis = endMillis;
    lastMaxRowAgeMs = endMillis - files.minIngestMillis();
    lastMinRowAgeMs = endMillis - files.maxIngestMillis();
    recordRowAges(files.ingestSecondCounts(), endMillis);
    commits.inc();
  }

  /**
   * Feeds commit time − ingest time of the batch's rows (per ingest second, mid-second) into the
   * histogram.
   */
  private void recordRowAges(Map<Long, Long> counts, long commitMillis) {
    long rows = 0;
    for (long n : counts.values()) {
      rows += n;
    }
    long perUpdate = Math.max(1, (rows + AGE_WINDOW - 1) / AGE_WINDOW);
    counts.forEach(
        (second, n) -> {
          long age = commitMillis - (second * 1000 + 500);
          for (long i = 0; i < (n + perUpdate - 1) / perUpdate; i++) {
            rowAgeAtCommit.update(age);
          }
        });
  }
}
