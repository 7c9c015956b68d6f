package org.spatialingest.sink.distribution;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.apache.flink.table.data.RowData;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sizing.SizingBounds;

/**
 * One placement subtask's decision where each row goes: a writer slot and a buffer id for every row
 * of every table of the sink ({@link TablePlacement}, {@link PartitionPlacement}), by the {@link
 * GlobalRanges} the coordinator sent, or before the first merge by this subtask's own statistics
 * (the fallback, re-cut about once a second: {@link #refreshIfDue}), and the {@link SubtaskReport}
 * of what it sampled since its last report. Placed rows go to the {@link RowBatcher}.
 *
 * <p>Knows nothing of Flink's operators, events or timers: the clocks come in ({@code nanoTime} for
 * the windows of its own rate, {@code wallMillis} for the age of the rows), so a test drives it row
 * by row.
 *
 * <p>Cost per row: see {@link TablePlacement}, plus a binary search over at most a few dozen
 * boundaries and the row's serialization into its batch. Not thread-safe (the task thread).
 */
final class RangePlacement {
  /** The fallback's window: its ranges are re-cut about this often. */
  static final long REFRESH_NANOS = 1_000_000_000L;

  private final List<TablePlacement> tables;
  private final RowBatcher batcher;
  private final SizingBounds bounds;
  private final int writers;
  private final int maxOpenPartitions;
  private final int subtasks;
  private final DoubleSupplier encodedPerBufferedByte;
  private final LongSupplier nanoTime;
  private final LongSupplier wallMillis;
  private final SplittableRandom random;

  private RangeCount rangeCount;
  private GlobalRanges global;
  private boolean started;
  private boolean refreshed;
  private long windowStartNanos;
  private long reportWindowStartNanos;

  /**
   * @param tables the sink's tables, in its order
   * @param subtask this subtask's index (seeds its sampling), of {@code subtasks}
   * @param encodedPerBufferedByte the ranged table's Parquet/buffered byte ratio, read at each
   *     window ({@link EncodedRatioReader#ratio})
   */
  RangePlacement(
      List<TablePlacement.Table> tables,
      DistributionMode mode,
      SizingBounds bounds,
      int writers,
      int maxOpenPartitions,
      int subtask,
      int subtasks,
      DoubleSupplier encodedPerBufferedByte,
      RowBatcher batcher,
      LongSupplier nanoTime,
      LongSupplier wallMillis) {
    boolean rangeMode = mode == DistributionMode.RANGE;
    this.tables = new ArrayList<>(tables.size());
    for (int i = 0; i < tables.size(); i++) {
      this.tables.add(new TablePlacement(i, tables.get(i), rangeMode, writers, batcher));
    }
    this.batcher = batcher;
    this.bounds = bounds;
    this.writers = writers;
    this.maxOpenPartitions = maxOpenPartitions;
    this.subtasks = subtasks;
    this.encodedPerBufferedByte = encodedPerBufferedByte;
    this.nanoTime = nanoTime;
    this.wallMillis = wallMillis;
    this.random = new SplittableRandom(subtask);
    this.rangeCount =
        RangeCount.of(bounds, encodedPerBufferedByte.getAsDouble(), writers, maxOpenPartitions);
  }

  /** Whether any table is split by key range (only then is there anything to hold or report). */
  boolean anyRanged() {
    return tables.stream().anyMatch(TablePlacement::ranged);
  }

  TablePlacement table(int index) {
    return tables.get(index);
  }

  /** Whether the coordinator's ranges have come. */
  boolean hasGlobalRanges() {
    return global != null;
  }

  /** At the first row: the windows of its rate and its report start now. */
  void start() {
    started = true;
    windowStartNanos = nanoTime.getAsLong();
    reportWindowStartNanos = windowStartNanos;
  }

  /** Whether {@link #start} was called. */
  boolean started() {
    return started;
  }

  /** The placement of {@code row}'s partition in {@code table}. */
  PartitionPlacement partition(TablePlacement table, RowData row) {
    return table.partition(row, global, rangeCount);
  }

  /**
   * Samples a row of a ranged table ({@link TablePlacement#sample}); returns the bytes counted for
   * it (0 for most rows).
   */
  long sample(TablePlacement table, PartitionPlacement partition, RowData row) {
    return table.sample(partition, row, random);
  }

  /** Places {@code row} on its writer slot and buffer id, into its batch. */
  void place(TablePlacement table, PartitionPlacement partition, RowData row) {
    int bufferId = table.bufferId(partition, row);
    batcher.add(partition.batches, bufferId, partition.slot(bufferId, writers), row);
  }

  /** Takes the coordinator's ranges: every partition is placed by them from now on. */
  void useGlobal(GlobalRanges ranges) {
    global = ranges;
    for (TablePlacement table : tables) {
      table.useGlobal(ranges, rangeCount);
    }
  }

  /**
   * Closes the rate window if it is due: at once the first time (a sample of 256 keys already
   * places rows far better than one range, and a backlog needs its ranges from the start), then
   * once per {@link #REFRESH_NANOS}. Called every 256 rows.
   */
  void refreshIfDue() {
    long now = nanoTime.getAsLong();
    if (refreshed && now - windowStartNanos < REFRESH_NANOS) {
      return;
    }
    refresh((now - windowStartNanos) / 1e9);
  }

  /** Closes the rate window now (before held rows go out by the fallback). */
  void refreshNow() {
    refresh(Math.max(1e-3, (nanoTime.getAsLong() - windowStartNanos) / 1e9));
  }

  private void refresh(double seconds) {
    windowStartNanos = nanoTime.getAsLong();
    refreshed = true;
    double ratio = encodedPerBufferedByte.getAsDouble();
    if (ratio != rangeCount.encodedPerBufferedByte()) {
      rangeCount = RangeCount.of(bounds, ratio, writers, maxOpenPartitions);
    }
    long now = wallMillis.getAsLong();
    for (TablePlacement table : tables) {
      table.refresh(seconds, subtasks, rangeCount, global, now);
    }
  }

  /**
   * What this subtask sampled since its last report, for round {@code round} (0: the early report);
   * its samples start over.
   */
  SubtaskReport report(long round) {
    long now = nanoTime.getAsLong();
    double seconds = started ? Math.max(1e-3, (now - reportWindowStartNanos) / 1e9) : 0;
    reportWindowStartNanos = now;
    List<List<SubtaskReport.PartitionSample>> perTable = new ArrayList<>(tables.size());
    for (TablePlacement table : tables) {
      List<SubtaskReport.PartitionSample> samples = new ArrayList<>();
      table.drainSamples(samples::add);
      perTable.add(samples);
    }
    return new SubtaskReport(round, seconds, encodedPerBufferedByte.getAsDouble(), perTable);
  }
}
