package org.spatialingest.tools;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The sink's own fields of one snapshot summary ({@link SnapshotSummaryKeys}), or nothing for
 * snapshots the sink did not write (no {@link SnapshotSummaryKeys#BATCH_ID}). Numeric fields
 * missing or unparsable are {@code null}.
 */
public record SinkCommit(
    long snapshotId,
    long timestampMillis,
    String operation,
    String batchId,
    String flinkJobId,
    Long checkpointId,
    Long rows,
    Long files,
    Long fileBytes,
    Long bufferedBytes,
    Long minIngestMillis,
    Long maxIngestMillis,
    Map<String, Long> closedByReason) {

  public static Optional<SinkCommit> of(Snapshot snapshot) {
    Map<String, String> s = snapshot.summary();
    String batchId = s == null ? null : s.get(SnapshotSummaryKeys.BATCH_ID);
    if (batchId == null) {
      return Optional.empty();
    }
    Map<String, Long> closed = new TreeMap<>();
    s.forEach(
        (k, v) -> {
          if (k.startsWith(SnapshotSummaryKeys.CLOSED_PREFIX)) {
            Long n = number(v);
            if (n != null) {
              closed.put(k.substring(SnapshotSummaryKeys.CLOSED_PREFIX.length()), n);
            }
          }
        });
    return Optional.of(
        new SinkCommit(
            snapshot.snapshotId(),
            snapshot.timestampMillis(),
            snapshot.operation(),
            batchId,
            s.get(SnapshotSummaryKeys.FLINK_JOB_ID),
            number(s.get(SnapshotSummaryKeys.CHECKPOINT_ID)),
            number(s.get(SnapshotSummaryKeys.ROWS)),
            number(s.get(SnapshotSummaryKeys.FILES)),
            number(s.get(SnapshotSummaryKeys.FILE_BYTES)),
            number(s.get(SnapshotSummaryKeys.BUFFERED_BYTES)),
            number(s.get(SnapshotSummaryKeys.MIN_INGEST_MS)),
            number(s.get(SnapshotSummaryKeys.MAX_INGEST_MS)),
            closed));
  }

  /**
   * Snapshot time minus the oldest row's Kafka timestamp: how old the oldest row was when it became
   * visible.
   */
  public Long maxAgeAtCommitMillis() {
    return minIngestMillis == null ? null : timestampMillis - minIngestMillis;
  }

  /** Snapshot time minus the newest row's Kafka timestamp. */
  public Long minAgeAtCommitMillis() {
    return maxIngestMillis == null ? null : timestampMillis - maxIngestMillis;
  }

  /** The current snapshot and its ancestors, newest first. */
  public static List<Snapshot> history(Table table) {
    List<Snapshot> out = new ArrayList<>();
    if (table.currentSnapshot() != null) {
      SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot)
          .forEach(out::add);
    }
    return out;
  }

  /**
   * Close reasons summed over commits, every known reason present (0 when absent), unknown codes
   * kept.
   */
  public static Map<String, Long> sumClosed(Iterable<SinkCommit> commits) {
    Map<String, Long> sum = new LinkedHashMap<>();
    for (CloseReason r : CloseReason.values()) {
      sum.put(r.code(), 0L);
    }
    for (SinkCommit c : commits) {
      c.closedByReason().forEach((k, v) -> sum.merge(k, v, Long::sum));
    }
    return sum;
  }

  private static Long number(String v) {
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
