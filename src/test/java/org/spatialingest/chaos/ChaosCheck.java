package org.spatialingest.chaos;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.TestKit;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The independent check at the end of a chaos run, from the tables' files and metadata only (not
 * from the job's metrics or logs): every acknowledged record exactly once, as a row or as a reject;
 * the other writer's rows intact; no file in the tables' locations that no snapshot references;
 * every snapshot of the sink saying what it added; and the oldest row of each commit no older than
 * L + C plus the recovery time of the faults it lived through.
 */
final class ChaosCheck {
  private ChaosCheck() {}

  /**
   * A time the job could not commit what arrived: a fault until its recovery (for a fault that
   * stopped the job reading, until it had also committed what the topic held when it ran again), or
   * a job's first start until its first commit.
   */
  record Outage(String what, long startMillis, long endMillis) {}

  record Result(
      long produced,
      long expectedRows,
      long rows,
      long lost,
      long duplicated,
      long expectedRejects,
      long rejects,
      long rejectsLost,
      long rejectsDuplicated,
      long externalRows,
      List<String> orphans,
      List<String> incoherentSnapshots,
      long sinkSnapshots,
      long maxRowAgeMillis,
      long maxCommitDelayMillis,
      long commitsWithoutTrigger,
      long freshnessViolations,
      List<String> freshnessExamples,
      List<String> newColumnProblems) {
    boolean ok() {
      return lost == 0
          && duplicated == 0
          && rejectsLost == 0
          && rejectsDuplicated == 0
          && orphans.isEmpty()
          && incoherentSnapshots.isEmpty()
          && freshnessViolations == 0
          && newColumnProblems.isEmpty();
    }
  }

  static Result run(
      Table table,
      Table rejects,
      BitSet acknowledged,
      BitSet malformedNumbers,
      Set<String> malformed,
      List<String> externalIds,
      List<Outage> outages,
      BiFunction<String, Long, Long> checkpointTriggeredAt,
      long latencyPlusInterval,
      BitSet withNewProperty)
      throws Exception {
    table.refresh();
    rejects.refresh();
    BitSet accepted = (BitSet) acknowledged.clone();
    accepted.andNot(malformedNumbers);
    long produced = acknowledged.cardinality();
    long expectedRows = accepted.cardinality();
    // the table's ids, counted: generated records by number, everything else by value
    int[] counts = new int[acknowledged.length()];
    Map<String, Integer> other = new HashMap<>();
    long rows = 0;
    // a commit made twice lists its manifest twice, which a scan does not show
    TestKit.assertEachFileListedOnce(table);
    TestKit.assertEachFileListedOnce(rejects);
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).select("id").build()) {
      for (Record r : it) {
        rows++;
        String id = (String) r.getField("id");
        int n = recordNumber(id, counts.length);
        if (n >= 0) {
          counts[n]++;
        } else {
          other.merge(id, 1, Integer::sum);
        }
      }
    }
    long lost = 0;
    long duplicated = 0;
    for (int n = 0; n < counts.length; n++) {
      int expected = accepted.get(n) ? 1 : 0;
      lost += Math.max(0, expected - counts[n]);
      duplicated += Math.max(0, counts[n] - expected);
    }
    Map<String, Integer> externalExpected = new HashMap<>();
    externalIds.forEach(id -> externalExpected.merge(id, 1, Integer::sum));
    for (Map.Entry<String, Integer> e : externalExpected.entrySet()) {
      lost += Math.max(0, e.getValue() - other.getOrDefault(e.getKey(), 0));
    }
    for (Map.Entry<String, Integer> e : other.entrySet()) {
      duplicated += Math.max(0, e.getValue() - externalExpected.getOrDefault(e.getKey(), 0));
    }

    Map<String, Integer> rejected = new HashMap<>();
    long rejectRows = 0;
    try (CloseableIterable<Record> it = IcebergGenerics.read(rejects).select("raw").build()) {
      for (Record r : it) {
        rejectRows++;
        rejected.merge(
            new String(TestKit.bytes(r.getField("raw")), StandardCharsets.UTF_8), 1, Integer::sum);
      }
    }
    long rejectsLost = 0;
    long rejectsDuplicated = 0;
    for (String m : malformed) {
      rejectsLost += rejected.containsKey(m) ? 0 : 1;
    }
    for (Map.Entry<String, Integer> e : rejected.entrySet()) {
      rejectsDuplicated += malformed.contains(e.getKey()) ? e.getValue() - 1 : e.getValue();
    }

    List<String> orphans = new ArrayList<>();
    for (String orphan : TestKit.orphans(table)) {
      orphans.add(describeOrphan(table, orphan, counts, other));
    }
    orphans.addAll(TestKit.orphans(rejects));

    List<String> incoherent = new ArrayList<>();
    long sinkSnapshots = 0;
    long maxAge = 0;
    long maxCommitDelay = 0;
    long commitsWithoutTrigger = 0;
    long violations = 0;
    List<String> examples = new ArrayList<>();
    for (Table t : List.of(table, rejects)) {
      for (Snapshot s : t.snapshots()) {
        Map<String, String> summary = s.summary();
        if (!summary.containsKey(SnapshotSummaryKeys.BATCH_ID)) {
          continue;
        }
        sinkSnapshots++;
        String rowsSaid = summary.get(SnapshotSummaryKeys.ROWS);
        String filesSaid = summary.get(SnapshotSummaryKeys.FILES);
        if (!rowsSaid.equals(summary.getOrDefault("added-records", "0"))
            || !filesSaid.equals(summary.getOrDefault("added-data-files", "0"))) {
          incoherent.add(
              t.name()
                  + "@"
                  + s.snapshotId()
                  + ": says "
                  + rowsSaid
                  + " rows/"
                  + filesSaid
                  + " files, Iceberg counted "
                  + summary.get("added-records")
                  + "/"
                  + summary.get("added-data-files"));
        }
        String minIngest = summary.get(SnapshotSummaryKeys.MIN_INGEST_MS);
        if (minIngest == null) {
          continue; // a batch with no file for this table
        }
        long oldest = Long.parseLong(minIngest);
        long age = s.timestampMillis() - oldest;
        maxAge = Math.max(maxAge, age);
        // the sink's bound holds at the barriers that closed the files: a row is in a file closed
        // at the first barrier after it is L old, within L + C; the checkpoint then completes and
        // the commit follows, which is the checkpoint's time, not the sink holding rows
        String checkpoint = summary.get(SnapshotSummaryKeys.CHECKPOINT_ID);
        Long triggered =
            checkpoint == null
                ? null
                : checkpointTriggeredAt.apply(
                    summary.get(SnapshotSummaryKeys.FLINK_JOB_ID), Long.parseLong(checkpoint));
        long ageAtBarrier = age;
        if (triggered != null && triggered <= s.timestampMillis()) {
          ageAtBarrier = triggered - oldest;
          maxCommitDelay = Math.max(maxCommitDelay, s.timestampMillis() - triggered);
        } else {
          commitsWithoutTrigger++;
        }
        long allowance = 0;
        List<String> livedThrough = new ArrayList<>();
        for (Outage o : outages) {
          if (o.startMillis() < s.timestampMillis() && o.endMillis() > oldest) {
            allowance += o.endMillis() - o.startMillis();
            livedThrough.add(o.what().toLowerCase(java.util.Locale.ROOT));
          }
        }
        if (ageAtBarrier > latencyPlusInterval + allowance) {
          violations++;
          if (examples.size() < 10) {
            examples.add(
                t.name()
                    + "@"
                    + s.snapshotId()
                    + " (job "
                    + summary.get(SnapshotSummaryKeys.FLINK_JOB_ID)
                    + ")"
                    + ": oldest row "
                    + ageAtBarrier
                    + " ms old at its checkpoint's trigger ("
                    + age
                    + " ms at commit) > L + C "
                    + latencyPlusInterval
                    + " ms + recovery "
                    + allowance
                    + " ms "
                    + livedThrough);
          }
        }
      }
    }
    Snapshot current = table.currentSnapshot();
    String total = current.summary().get("total-records");
    if (total != null && Long.parseLong(total) != rows) {
      incoherent.add(
          table.name() + " current snapshot says total-records " + total + ", a scan read " + rows);
    }
    return new Result(
        produced,
        expectedRows,
        rows,
        lost,
        duplicated,
        malformed.size(),
        rejectRows,
        rejectsLost,
        rejectsDuplicated,
        externalIds.size(),
        orphans,
        incoherent,
        sinkSnapshots,
        maxAge,
        maxCommitDelay,
        commitsWithoutTrigger,
        violations,
        examples,
        withNewProperty == null ? List.of() : newColumnProblems(table, withNewProperty));
  }

  /**
   * Under {@code input.typed-properties: auto}: the property that appeared mid-run is a column of
   * the table, filled on exactly the rows whose records carried it (null on the others).
   *
   * @param withProperty record numbers that carried it (ids {@code rec-<n>})
   */
  static List<String> newColumnProblems(Table table, BitSet withProperty) throws Exception {
    String column = ChaosProducer.NEW_PROPERTY;
    if (table.schema().findField(column) == null) {
      return List.of("no column " + column + " in " + table.schema().columns().size() + " columns");
    }
    List<String> problems = new ArrayList<>();
    int filled = 0;
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).select("id", column).build()) {
      for (Record r : it) {
        int n = recordNumber((String) r.getField("id"), withProperty.length() + 1_000_000);
        boolean carried = n >= 0 && withProperty.get(n);
        boolean hasValue = r.getField(column) != null;
        if (hasValue) {
          filled++;
        }
        if (carried != hasValue && problems.size() < 5) {
          problems.add(
              r.getField("id") + ": " + (carried ? "carried it, column null" : "column filled"));
        }
      }
    }
    if (filled == 0) {
      problems.add("no row has a value in " + column);
    }
    return problems;
  }

  /** n for an id {@code rec-<n>} of the generator within range, else -1. */
  /**
   * An orphan with what tells its story: when it was written, and whether its rows are committed in
   * another file (a copy a restore wrote again, which the clean-up missed) or nowhere (a file the
   * job may still commit).
   */
  private static String describeOrphan(
      Table table, String path, int[] counts, Map<String, Integer> other) {
    StringBuilder s = new StringBuilder(path);
    try {
      java.nio.file.Path file = java.nio.file.Path.of(path);
      s.append(" (written ")
          .append(java.nio.file.Files.getLastModifiedTime(file))
          .append(", ")
          .append(java.nio.file.Files.size(file))
          .append(" bytes");
      org.apache.iceberg.Schema ids = table.schema().select("id");
      long rows = 0;
      long committed = 0;
      try (CloseableIterable<Record> it =
          org.apache.iceberg.parquet.Parquet.read(
                  org.apache.iceberg.Files.localInput(file.toFile()))
              .project(ids)
              .createReaderFunc(
                  fileSchema ->
                      org.apache.iceberg.data.parquet.GenericParquetReaders.buildReader(
                          ids, fileSchema))
              .build()) {
        for (Record r : it) {
          rows++;
          String id = (String) r.getField("id");
          int n = recordNumber(id, counts.length);
          committed += (n >= 0 ? counts[n] > 0 : other.containsKey(id)) ? 1 : 0;
        }
      }
      s.append(", ").append(rows).append(" rows, ").append(committed).append(" of them committed");
    } catch (Exception | LinkageError e) {
      s.append(" (unreadable: ").append(e).append(')');
    }
    return s.append(')').toString();
  }

  private static int recordNumber(String id, int count) {
    if (!id.startsWith("rec-")) {
      return -1;
    }
    try {
      long n = Long.parseLong(id, 4, id.length(), 10);
      return n < count ? (int) n : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
