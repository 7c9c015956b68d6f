package org.spatialingest.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.config.ConfigException;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * {@code verify}: compares the median size of the data files the sink wrote into one partition with
 * the planned size. "Before compaction": the files are the ones the sink's own commits added
 * (snapshots carrying the sink's batch id, in the current snapshot's history), whether or not a
 * later rewrite replaced them.
 */
public final class PartitionVerification {
  private static final DateTimeFormatter HOUR =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH", Locale.ROOT).withZone(ZoneOffset.UTC);

  /** Histogram edges as multiples of the expected size. */
  private static final double[] EDGES = {1 / 16.0, 1 / 8.0, 1 / 4.0, 1 / 2.0, 1, 2, 4, 8, 16};

  private PartitionVerification() {}

  public record Report(
      String table,
      String partition,
      String partitionSelection,
      int files,
      long rows,
      long bytes,
      long medianFileBytes,
      double medianFileMb,
      double expectedFileMb,
      String expectedSource,
      double ratio,
      double tolerance,
      boolean withinTolerance,
      String verdict,
      String explanation,
      List<Bucket> histogram,
      int sinkCommits,
      double snapshotsPerHour,
      Map<String, Integer> snapshotsByHour,
      Map<String, Long> closedByReason) {}

  /**
   * Files whose size is in {@code [fromBytes, toBytes)}; {@code toBytes} null for the open last
   * bucket.
   */
  public record Bucket(String range, long fromBytes, Long toBytes, int files) {}

  /**
   * @param partition null: the newest partition (latest time range) the sink wrote to
   * @param expectedBytes planned file size, &gt; 0
   * @param tolerance factor &ge; 1: within when {@code expected / tolerance <= median <= expected *
   *     tolerance}
   */
  public static Report verify(
      Table table,
      String name,
      PartitionFilter partition,
      long expectedBytes,
      String expectedSource,
      double tolerance) {
    record Added(SinkCommit commit, DataFile file, String label, long start) {}
    List<Added> added = new ArrayList<>();
    for (Snapshot s : SinkCommit.history(table)) {
      SinkCommit c = SinkCommit.of(s).orElse(null);
      if (c == null) {
        continue;
      }
      Iterable<DataFile> addedFiles =
          SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles();
      try (CloseableIterable<DataFile> files = CloseableIterable.withNoopClose(addedFiles)) {
        for (DataFile f : files) {
          PartitionSpec spec = table.specs().get(f.specId());
          if (partition != null && !partition.matches(spec, f.partition())) {
            continue;
          }
          added.add(
              new Added(
                  c,
                  f,
                  PartitionFilter.label(spec, f.partition()),
                  PartitionFilter.startMillis(spec, f.partition())));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (added.isEmpty()) {
      throw new ConfigException(
          partition == null
              ? "table "
                  + name
                  + " has no data files written by the sink (no snapshot with "
                  + SnapshotSummaryKeys.BATCH_ID
                  + ")"
              : "the sink wrote no data files to partition " + partition + " of " + name);
    }
    String label;
    if (partition == null) {
      Added newest = added.get(0);
      for (Added a : added) {
        if (a.start > newest.start
            || (a.start == newest.start && a.label.compareTo(newest.label) > 0)) {
          newest = a;
        }
      }
      label = newest.label;
    } else {
      label = added.get(0).label;
    }
    String chosen = label;
    added.removeIf(a -> !a.label.equals(chosen));

    long[] sizes = added.stream().mapToLong(a -> a.file.fileSizeInBytes()).toArray();
    long rows = added.stream().mapToLong(a -> a.file.recordCount()).sum();
    long bytes = added.stream().mapToLong(a -> a.file.fileSizeInBytes()).sum();
    double median = Stats.median(sizes);
    double ratio = median / expectedBytes;
    boolean within = ratio >= 1 / tolerance && ratio <= tolerance;
    String verdict = within ? "ok" : ratio < 1 ? "too_small" : "too_large";

    Map<Long, SinkCommit> commits = new LinkedHashMap<>();
    added.forEach(a -> commits.putIfAbsent(a.commit.snapshotId(), a.commit));
    Map<String, Integer> byHour = new TreeMap<>();
    commits
        .values()
        .forEach(
            c ->
                byHour.merge(
                    HOUR.format(Instant.ofEpochMilli(c.timestampMillis())), 1, Integer::sum));
    long firstHour =
        commits.values().stream().mapToLong(c -> c.timestampMillis() / 3_600_000L).min().orElse(0);
    long lastHour =
        commits.values().stream().mapToLong(c -> c.timestampMillis() / 3_600_000L).max().orElse(0);
    double perHour = commits.size() / (double) (lastHour - firstHour + 1);
    Map<String, Long> closed = SinkCommit.sumClosed(commits.values());

    return new Report(
        name,
        label,
        partition == null ? "newest" : partition.toString(),
        sizes.length,
        rows,
        bytes,
        Math.round(median),
        round3(median / 1e6),
        round3(expectedBytes / 1e6),
        expectedSource,
        Math.round(ratio * 1e6) / 1e6,
        tolerance,
        within,
        verdict,
        explain(verdict, ratio, tolerance, closed),
        histogram(sizes, expectedBytes),
        commits.size(),
        round3(perHour),
        byHour,
        closed);
  }

  static String explain(String verdict, double ratio, double tolerance, Map<String, Long> closed) {
    long total = closed.values().stream().mapToLong(Long::longValue).sum();
    String dominant =
        closed.entrySet().stream()
            .max(Map.Entry.comparingByValue())
            .map(Map.Entry::getKey)
            .orElse("none");
    String reasons =
        total == 0
            ? ""
            : String.format(
                Locale.ROOT,
                " Most files in these commits closed by '%s' (%d of" + " %d).",
                dominant,
                closed.get(dominant),
                total);
    return switch (verdict) {
      case "ok" ->
          String.format(
                  Locale.ROOT,
                  "Median file size is %.3gx the planned size, within the %sx tolerance.",
                  ratio,
                  num(tolerance))
              + reasons;
      case "too_small" ->
          String.format(
                  Locale.ROOT,
                  "Median file size is %.3gx the planned size, below 1/%sx: the"
                      + " latency bound binds earlier than planned, so batches close before they fill (fewer rows per writer and"
                      + " partition than planned: a lower rate, more writers or partitions sharing it, or a shorter"
                      + " sink.max-latency).",
                  ratio,
                  num(tolerance))
              + reasons
              + hint(dominant);
      default ->
          String.format(
                  Locale.ROOT,
                  "Median file size is %.3gx the planned size, above %sx: batches hold more"
                      + " than planned. The plan spread the rate over more partitions per batch (fan-out) or writers than"
                      + " actually share it, or the rate is higher than planned; check --partitions-per-commit and --writers of"
                      + " the plan.",
                  ratio,
                  num(tolerance))
              + reasons
              + hint(dominant);
    };
  }

  private static String hint(String dominant) {
    return switch (dominant) {
      case "memory" ->
          " Memory flushes dominate: the memory budget, not latency, cuts the batches.";
      case "partition_limit" ->
          " Partition-limit closes dominate: more partitions are open at once than"
              + " sink.max-open-partitions + sink.max-parked-partitions allow.";
      case "checkpoint" ->
          " The every-checkpoint close policy closes every file at every checkpoint.";
      case "bytes" ->
          " Byte closes dominate: files reach the job's sink.target-file-size, so the job's target differs"
              + " from the plan's --target-file-mb, or the plan's encoded bytes per record are off.";
      case "end_of_input" ->
          " End-of-input closes dominate: bounded runs (backfills) ended and wrote partial files.";
      default -> "";
    };
  }

  static List<Bucket> histogram(long[] sizes, long expected) {
    List<Bucket> buckets = new ArrayList<>();
    long from = 0;
    for (int i = 0; i <= EDGES.length; i++) {
      Long to = i < EDGES.length ? Math.round(expected * EDGES[i]) : null;
      int n = 0;
      for (long s : sizes) {
        if (s >= from && (to == null || s < to)) {
          n++;
        }
      }
      String range =
          (i == 0 ? "0" : factor(EDGES[i - 1]) + "x")
              + " - "
              + (to == null ? "" : factor(EDGES[i]) + "x");
      buckets.add(new Bucket(range.trim(), from, to, n));
      if (to != null) {
        from = to;
      }
    }
    return buckets;
  }

  private static String factor(double f) {
    return f >= 1 ? num(f) : "1/" + num(1 / f);
  }

  private static String num(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.3f", v);
  }

  private static double round3(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }
}
