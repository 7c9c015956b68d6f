package org.spatialingest.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * What one finished (bounded) run did, from the tables themselves: the rows and rejects its Flink
 * job committed (the snapshot summaries carrying its job id), rejects by reason (rejects rejected
 * since the run started), files and snapshots, plus the records it skipped as already committed and
 * its wall time.
 *
 * @param rejectsByReason reject reason → count
 * @param skipped records the resume filter skipped (already in the tables)
 * @param inputsNotRead input files not read at all: every line of them was already committed
 */
public record RunSummary(
    long rows,
    long rejects,
    Map<String, Long> rejectsByReason,
    long files,
    long snapshots,
    long skipped,
    int inputsNotRead,
    Duration wall) {

  public static RunSummary of(
      Table telemetry,
      Table rejectsTable,
      String flinkJobId,
      Instant start,
      long skipped,
      int inputsNotRead) {
    long[] main = committedBy(telemetry, flinkJobId);
    long[] rej = committedBy(rejectsTable, flinkJobId);
    Map<String, Long> byReason = new TreeMap<>();
    rejectsTable.refresh();
    if (rejectsTable.currentSnapshot() != null) {
      try (CloseableIterable<Record> rows =
          IcebergGenerics.read(rejectsTable)
              .select("reason", "rejected_at")
              .where(Expressions.greaterThanOrEqual("rejected_at", start.toEpochMilli() * 1000))
              .build()) {
        for (Record r : rows) {
          byReason.merge((String) r.getField("reason"), 1L, Long::sum);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new RunSummary(
        main[0],
        rej[0],
        byReason,
        main[1] + rej[1],
        main[2] + rej[2],
        skipped,
        inputsNotRead,
        Duration.between(start, Instant.now()));
  }

  /** {rows, files, snapshots} that snapshots of {@code flinkJobId} added. */
  private static long[] committedBy(Table table, String flinkJobId) {
    table.refresh();
    long[] sum = new long[3];
    for (Snapshot s : table.snapshots()) {
      if (flinkJobId.equals(s.summary().get(SnapshotSummaryKeys.FLINK_JOB_ID))) {
        sum[0] += Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.ROWS, "0"));
        sum[1] += Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.FILES, "0"));
        sum[2]++;
      }
    }
    return sum;
  }

  /** Records read: committed as rows or rejects, or skipped as already committed. */
  public long read() {
    return rows + rejects + skipped;
  }

  public String line() {
    StringBuilder reasons = new StringBuilder();
    rejectsByReason.forEach(
        (reason, n) ->
            reasons
                .append(reasons.length() == 0 ? "" : ", ")
                .append(reason)
                .append(' ')
                .append(String.format(Locale.ROOT, "%,d", n)));
    return String.format(
        Locale.ROOT,
        "Summary: %,d records read: %,d rows and %,d rejects committed%s, %,d skipped "
            + "as already committed%s; %,d data files in %,d snapshots; wall time %.1f s",
        read(),
        rows,
        rejects,
        reasons.length() == 0 ? "" : " (" + reasons + ")",
        skipped,
        inputsNotRead == 0
            ? ""
            : String.format(
                Locale.ROOT,
                " (%,d input file%s not read: committed whole)",
                inputsNotRead,
                inputsNotRead == 1 ? "" : "s"),
        files,
        snapshots,
        wall.toMillis() / 1000.0);
  }
}
