package org.spatialingest.sink;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits each checkpoint's merged {@link FileBatch} as one Iceberg append snapshot, after the checkpoint completed.
 *
 * <p>Idempotent across restarts without trusting checkpoint ids: a batch is identified by a digest of its file paths
 * (file names carry a per-writer-instance UUID, so no two batches share one). Before committing, the committer looks
 * for that digest in the summaries of the table's recent snapshots, back to shortly before the batch was created. A
 * stateless restart that reuses the job id, or a restore from an older checkpoint, therefore neither skips a new batch
 * (the digest is new) nor commits an old one twice (the digest is found).
 */
final class IcebergBatchCommitter implements Committer<FileBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(IcebergBatchCommitter.class);
  /** How far before a batch's creation to look for its commit; covers clock skew between task managers. */
  private static final long LOOKBACK_SLACK_MS = 10 * 60_000L;
  /** values the age histogram keeps; a commit feeds at most this many (rows weighted by their ingest second) */
  private static final int AGE_WINDOW = 4096;

  private final TableLoader tableLoader;
  private final Table table;
  private final String jobId;
  private final Counter committedFiles;
  private final Counter committedBytes;
  private final Counter committedRows;
  private final Counter commits;
  private volatile long lastCommitDurationMs;
  private volatile long lastCommitMillis;
  private volatile long lastMaxRowAgeMs;
  private volatile long lastMinRowAgeMs;
  private final Histogram rowAgeAtCommit;

  IcebergBatchCommitter(TableLoader tableLoader, CommitterInitContext context) {
    this.tableLoader = tableLoader;
    tableLoader.open();
    this.table = tableLoader.loadTable();
    this.jobId = context.getJobInfo().getJobId().toHexString();
    MetricGroup group = context.metricGroup().addGroup("spatialSink");
    committedFiles = group.counter("committedFiles");
    committedBytes = group.counter("committedBytes");
    committedRows = group.counter("committedRows");
    commits = group.counter("commits");
    group.gauge("commitDurationMs", () -> lastCommitDurationMs);
    group.gauge("timeSinceLastCommitMs", () -> lastCommitMillis == 0 ? 0L
        : System.currentTimeMillis() - lastCommitMillis);
    group.gauge("maxRowAgeAtCommitMs", () -> lastMaxRowAgeMs);
    group.gauge("minRowAgeAtCommitMs", () -> lastMinRowAgeMs);
    rowAgeAtCommit = group.histogram("rowAgeAtCommitMs", new DescriptiveStatisticsHistogram(AGE_WINDOW));
  }

  @Override
  public void commit(java.util.Collection<CommitRequest<FileBatch>> requests) {
    List<CommitRequest<FileBatch>> ordered = new ArrayList<>(requests);
    ordered.sort(Comparator.comparingLong(r -> r.getCommittable().checkpointId()));
    for (CommitRequest<FileBatch> request : ordered) {
      commit(request);
    }
  }

  private void commit(CommitRequest<FileBatch> request) {
    FileBatch batch = request.getCommittable();
    if (batch.files().isEmpty()) {
      return;
    }
    table.refresh();
    String batchId = batch.batchId();
    if (alreadyCommitted(batchId, batch.createdAtMillis())) {
      LOG.info("Batch {} of checkpoint {} ({} files) is already in the table; not committing it again", batchId,
          batch.checkpointId(), batch.files().size());
      request.signalAlreadyCommitted();
      return;
    }
    SinkFaults.reach(SinkFaults.Point.BEFORE_COMMIT);
    long start = System.currentTimeMillis();
    AppendFiles append = table.newAppend();
    batch.files().forEach(append::appendFile);
    summary(batch, batchId).forEach(append::set);
    append.commit();
    SinkFaults.reach(SinkFaults.Point.AFTER_COMMIT);
    long end = System.currentTimeMillis();
    lastCommitDurationMs = end - start;
    lastCommitMillis = end;
    lastMaxRowAgeMs = end - batch.minIngestMillis();
    lastMinRowAgeMs = end - batch.maxIngestMillis();
    recordRowAges(batch, end);
    commits.inc();
    committedFiles.inc(batch.files().size());
    committedBytes.inc(batch.fileBytes());
    committedRows.inc(batch.rowCount());
    LOG.info("Committed checkpoint {}: {} files, {} rows, {} bytes in {} ms (batch {})", batch.checkpointId(),
        batch.files().size(), batch.rowCount(), batch.fileBytes(), lastCommitDurationMs, batchId);
  }

  /** Feeds commit time − ingest time of the batch's rows (per ingest second, mid-second) into the histogram. */
  private void recordRowAges(FileBatch batch, long commitMillis) {
    long rows = 0;
    for (long n : batch.ingestSecondCounts().values()) {
      rows += n;
    }
    long perUpdate = Math.max(1, (rows + AGE_WINDOW - 1) / AGE_WINDOW);
    batch.ingestSecondCounts().forEach((second, n) -> {
      long age = commitMillis - (second * 1000 + 500);
      for (long i = 0; i < (n + perUpdate - 1) / perUpdate; i++) {
        rowAgeAtCommit.update(age);
      }
    });
  }

  private Map<String, String> summary(FileBatch batch, String batchId) {
    Map<String, String> s = new java.util.LinkedHashMap<>();
    s.put(SnapshotSummaryKeys.BATCH_ID, batchId);
    s.put(SnapshotSummaryKeys.LINEAGE, batch.lineage());
    s.put(SnapshotSummaryKeys.FLINK_JOB_ID, jobId);
    s.put(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(batch.checkpointId()));
    s.put(SnapshotSummaryKeys.ROWS, Long.toString(batch.rowCount()));
    s.put(SnapshotSummaryKeys.FILES, Integer.toString(batch.files().size()));
    s.put(SnapshotSummaryKeys.FILE_BYTES, Long.toString(batch.fileBytes()));
    s.put(SnapshotSummaryKeys.BUFFERED_BYTES, Long.toString(batch.bufferedBytes()));
    s.put(SnapshotSummaryKeys.MIN_INGEST_MS, Long.toString(batch.minIngestMillis()));
    s.put(SnapshotSummaryKeys.MAX_INGEST_MS, Long.toString(batch.maxIngestMillis()));
    Map<CloseReason, Integer> byReason = new EnumMap<>(CloseReason.class);
    batch.reasons().forEach(r -> byReason.merge(r, 1, Integer::sum));
    byReason.forEach((r, n) -> s.put(SnapshotSummaryKeys.CLOSED_PREFIX + r.code(), Integer.toString(n)));
    return s;
  }

  private boolean alreadyCommitted(String batchId, long createdAtMillis) {
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return false;
    }
    long horizon = createdAtMillis - LOOKBACK_SLACK_MS;
    for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
      if (batchId.equals(s.summary().get(SnapshotSummaryKeys.BATCH_ID))) {
        return true;
      }
      if (s.timestampMillis() < horizon) {
        return false;
      }
    }
    return false;
  }

  @Override
  public void close() throws Exception {
    tableLoader.close();
  }
}
