package org.spatialingest.sizing;

import java.time.Duration;
import java.util.Locale;

/**
 * The batch arithmetic behind {@code plan}: how many rows one writer batch holds before the memory
 * budget (M), the target file size (T) or the latency bound (L) closes it, how often the sink then
 * commits, and how many files a day that makes. Pure: no I/O, no Flink, no Iceberg.
 *
 * <h2>Definitions</h2>
 *
 * A <em>batch</em> is the rows one writer subtask buffers for one partition between two commits; it
 * becomes one data file. With {@code W} writers and {@code P} partitions written per commit, each
 * (writer, partition) pair receives {@code r = rate / (W * P)} rows per second.
 *
 * <ul>
 *   <li>{@code rowsByMemory = floor(M / (b * P))}: the memory budget is per writer subtask and
 *       shared by the P partitions it holds open, rows spread evenly; with {@code P = 1} this is
 *       {@code M / b}.
 *   <li>{@code rowsByFile = floor(T / e)}: rows whose Parquet encoding reaches the target file
 *       size.
 *   <li>{@code rowsByTime = floor(r * L)}: rows that arrive within the latency bound.
 *   <li>{@code rowsPerBatch} is the smallest of the three; {@code bindingConstraint} names it. Ties
 *       go to {@code memory}, then {@code file_size}, then {@code latency} (the more pressing cause
 *       is reported). A rate of 0 always binds on latency.
 *   <li>{@code commitIntervalSeconds}: the time a batch takes to fill ({@code rowsPerBatch / r})
 *       rounded up to whole checkpoint intervals C (the sink commits only at checkpoints), capped
 *       at the last checkpoint not later than L, i.e. {@code C * max(1, floor(L / C))}: with L a
 *       multiple of C that is L, with L &lt; C it is C.
 *   <li>{@code expectedFileMb = rowsPerBatch * e / 1e6}. On a memory flush this equals {@code M *
 *       (e / b) / P}.
 *   <li>{@code filesPerDay = (86400 / commitIntervalSeconds) * filesPerCommit * P * W}, where
 *       {@code filesPerCommit} is 1 unless a batch fills in less than one checkpoint interval; then
 *       the sink closes {@code ceil(C / fillSeconds)} files per partition per commit (an upper
 *       bound).
 * </ul>
 *
 * Sizes are bytes; {@code ...Mb} values are decimal megabytes (10^6 bytes).
 */
public record BatchPlan(
    double bufferedBytesPerRecord,
    double encodedBytesPerRecord,
    double recordsPerSecond,
    SizingBounds bounds,
    int writers,
    int partitionsPerCommit,
    long rowsByMemory,
    long rowsByFile,
    long rowsByTime,
    long rowsPerBatch,
    BindingConstraint bindingConstraint,
    double fillSeconds,
    double commitIntervalSeconds,
    long filesPerCommit,
    double expectedFileMb,
    double filesPerDay) {

  public static final long SECONDS_PER_DAY = 86_400L;

  /**
   * Derives the plan.
   *
   * @param bufferedBytesPerRecord serialized bytes per row as the sink buffers it (b), &gt; 0
   * @param encodedBytesPerRecord Parquet bytes per row (e), &gt; 0
   * @param recordsPerSecond total input rate over all writers, &ge; 0
   * @param bounds M, T, L and C
   * @param writers writer subtasks, &ge; 1
   * @param partitionsPerCommit partitions each writer writes per commit, &ge; 1
   */
  public static BatchPlan derive(
      double bufferedBytesPerRecord,
      double encodedBytesPerRecord,
      double recordsPerSecond,
      SizingBounds bounds,
      int writers,
      int partitionsPerCommit) {
    requirePositive("buffered bytes per record", bufferedBytesPerRecord);
    requirePositive("encoded bytes per record", encodedBytesPerRecord);
    if (!(recordsPerSecond >= 0) || !Double.isFinite(recordsPerSecond)) {
      throw new IllegalArgumentException("rate must be >= 0 records/s, was " + recordsPerSecond);
    }
    if (bounds == null) {
      throw new IllegalArgumentException("sizing bounds are required");
    }
    if (writers < 1) {
      throw new IllegalArgumentException("writers must be >= 1, was " + writers);
    }
    if (partitionsPerCommit < 1) {
      throw new IllegalArgumentException(
          "partitions per commit must be >= 1, was " + partitionsPerCommit);
    }

    double latencySeconds = seconds(bounds.maxLatency());
    double checkpointSeconds = seconds(bounds.checkpointInterval());
    double perPairRate = recordsPerSecond / ((double) writers * partitionsPerCommit);

    long byMemory =
        floorToLong(bounds.memoryBytes() / (bufferedBytesPerRecord * partitionsPerCommit));
    long byFile = floorToLong(bounds.targetFileBytes() / encodedBytesPerRecord);
    long byTime = floorToLong(perPairRate * latencySeconds);

    BindingConstraint binding;
    long rows;
    if (recordsPerSecond == 0) {
      binding = BindingConstraint.LATENCY;
      rows = 0;
    } else if (byMemory <= byFile && byMemory <= byTime) {
      binding = BindingConstraint.MEMORY;
      rows = byMemory;
    } else if (byFile <= byTime) {
      binding = BindingConstraint.FILE_SIZE;
      rows = byFile;
    } else {
      binding = BindingConstraint.LATENCY;
      rows = byTime;
    }

    if (rows == 0 && binding != BindingConstraint.LATENCY) {
      throw new IllegalArgumentException(
          binding == BindingConstraint.MEMORY
              ? "the memory budget holds less than one buffered record per partition; raise it or lower"
                  + " partitions per commit"
              : "the target file size is smaller than one encoded record");
    }

    double latencyCap = latencyCapSeconds(latencySeconds, checkpointSeconds);
    double fill = perPairRate > 0 ? rows / perPairRate : Double.POSITIVE_INFINITY;
    double interval;
    if (binding == BindingConstraint.LATENCY) {
      interval = latencyCap;
    } else {
      interval = Math.min(latencyCap, roundUpToCheckpoints(fill, checkpointSeconds));
    }

    long filesPerCommit = 1;
    if (binding != BindingConstraint.LATENCY && fill < checkpointSeconds) {
      filesPerCommit = fill > 0 ? (long) Math.ceil(checkpointSeconds / fill) : Long.MAX_VALUE;
    }
    double fileMb = rows * encodedBytesPerRecord / 1e6;
    double filesPerDay =
        SECONDS_PER_DAY / interval * (double) filesPerCommit * partitionsPerCommit * writers;

    return new BatchPlan(
        bufferedBytesPerRecord,
        encodedBytesPerRecord,
        recordsPerSecond,
        bounds,
        writers,
        partitionsPerCommit,
        byMemory,
        byFile,
        byTime,
        rows,
        binding,
        fill,
        interval,
        filesPerCommit,
        fileMb,
        filesPerDay);
  }

  /** Rows per second reaching one (writer, partition) pair. */
  public double recordsPerSecondPerWriterPartition() {
    return recordsPerSecond / ((double) writers * partitionsPerCommit);
  }

  /**
   * Fraction of the memory budget a writer holds at commit time (all its partitions), 0..1 or more.
   */
  public double memoryUseAtCommit() {
    return rowsPerBatch * bufferedBytesPerRecord * partitionsPerCommit / bounds.memoryBytes();
  }

  /** Fraction of the target file size a committed file reaches. */
  public double fileSizeFraction() {
    return rowsPerBatch * encodedBytesPerRecord / bounds.targetFileBytes();
  }

  /** What to do about the plan, one short paragraph per binding constraint. */
  public String advice() {
    String interval = fmt(commitIntervalSeconds);
    return switch (bindingConstraint) {
      case LATENCY ->
          recordsPerSecond == 0
              ? "Latency binds: with no input the sink commits (empty) every "
                  + interval
                  + " s. Measure the real rate."
              : String.format(
                  Locale.ROOT,
                  "Latency binds: batches commit every %s s at %.0f%% of the target file size and %.0f%% of the memory"
                      + " budget, so memory is to spare. Files stay small; batch more (raise sink.max-latency) only if"
                      + " freshness may relax, or write fewer partitions per commit.",
                  interval,
                  100 * fileSizeFraction(),
                  100 * memoryUseAtCommit());
      case MEMORY ->
          String.format(
              Locale.ROOT,
              "Memory binds: writers flush at the memory budget before files reach the target size (%.0f%% of it)."
                  + " Add writers to spread the rate, make buffered records smaller, or raise sink.memory-budget.",
              100 * fileSizeFraction());
      case FILE_SIZE ->
          String.format(
              Locale.ROOT,
              "File size binds: files reach the target size before the memory or latency bound closes them. Healthy;"
                  + " batches commit every %s s using %.0f%% of the memory budget.",
              interval,
              100 * memoryUseAtCommit());
    };
  }

  /** The last checkpoint not later than L, and at least one checkpoint interval. */
  static double latencyCapSeconds(double latencySeconds, double checkpointSeconds) {
    return checkpointSeconds * Math.max(1.0, Math.floor(latencySeconds / checkpointSeconds + 1e-9));
  }

  static double roundUpToCheckpoints(double seconds, double checkpointSeconds) {
    if (!Double.isFinite(seconds)) {
      return seconds;
    }
    return checkpointSeconds * Math.max(1.0, Math.ceil(seconds / checkpointSeconds - 1e-9));
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static long floorToLong(double v) {
    if (!Double.isFinite(v) || v >= Long.MAX_VALUE) {
      return Long.MAX_VALUE;
    }
    return (long) Math.floor(v);
  }

  private static void requirePositive(String what, double v) {
    if (!(v > 0) || !Double.isFinite(v)) {
      throw new IllegalArgumentException(what + " must be > 0, was " + v);
    }
  }

  private static String fmt(double seconds) {
    return seconds == Math.rint(seconds)
        ? Long.toString((long) seconds)
        : String.format(Locale.ROOT, "%.3f", seconds);
  }
}
