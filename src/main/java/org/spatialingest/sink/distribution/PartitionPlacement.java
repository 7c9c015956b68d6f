package org.spatialingest.sink.distribution;

/**
 * Where one subtask places the rows of one partition: its key ranges (a count, a power of two up to
 * the finest split, and the boundaries between them), a key's buffer id, and a buffer id's writer
 * slot. The finest split of the partition's keys is cut into one block of neighbouring ranges per
 * writer, starting at writer {@link #base} ({@code hash(partition)}): every subtask sends a range
 * to the same writer, a partition's ranges spread over the writers, and the ranges a writer holds
 * are adjacent in Hilbert order, so its latency close can pack their remainders into one file that
 * still covers one compact area. {@link Quantiles} cuts the writers' blocks by this rule.
 *
 * <p>Also keeps what the subtask measures of the partition: its own rate ({@link #local}, the
 * fallback's range count), the keys since its last report ({@link #reservoir}), and the rows on
 * their way to the writers ({@link #batches}). {@link TablePlacement#place} chooses the ranges.
 *
 * <p>Cost: {@link #bufferId} is a binary search over the boundaries (at most a few dozen); {@link
 * #slot} is arithmetic.
 */
final class PartitionPlacement {
  /** the partition's hash: the writer slot its first key range goes to */
  final int base;

  /** the partition's path ({@code PartitionSpec.partitionToPath}), as reports name it */
  final String path;

  /** this subtask's own rate and range count (the fallback's) */
  final PartitionLoad local;

  /** keys and bytes since the last report; null when the table is not ranged */
  final KeyReservoir reservoir;

  /** the rows on their way to the writers, by buffer id */
  final RowBatcher.PartitionBatches batches;

  /** the coordinator's ranges for it, null until a merge has seen it */
  GlobalRanges.PartitionRanges global;

  private int ranges = 1;
  private int finest = 1;
  private long[] boundaries = new long[0];

  PartitionPlacement(int base, String path, boolean ranged, RowBatcher.PartitionBatches batches) {
    this.base = base;
    this.path = path;
    this.local = new PartitionLoad(base);
    this.reservoir = ranged ? new KeyReservoir() : null;
    this.batches = batches;
  }

  /**
   * Places the partition's rows by {@code ranges} ranges (a power of two, at most {@code finest})
   * cut at {@code boundaries} ({@code ranges - 1} ascending keys, or none for one range).
   */
  void use(int finest, int ranges, long[] boundaries) {
    this.finest = finest;
    this.ranges = ranges;
    this.boundaries = boundaries;
  }

  int ranges() {
    return ranges;
  }

  int finest() {
    return finest;
  }

  long[] boundaries() {
    return boundaries;
  }

  /**
   * The buffer id of a row with sort key {@code key}: its range's first slot in the finest split,
   * so a row keeps its buffer id when the range count halves or doubles.
   */
  int bufferId(long key) {
    return KeySample.rangeOf(boundaries, key) * (finest / ranges);
  }

  /**
   * The writer slot of {@code bufferId} (the exchange takes it modulo {@code writers}): range
   * {@code r} of {@code k} goes to writer {@code base + r * w / k}, where {@code w} is {@link
   * RangeCount#writersFor} (every writer at the finest split, fewer for a partition with fewer
   * ranges), so each of those writers gets one block of adjacent ranges.
   */
  int slot(int bufferId, int writers) {
    int w = RangeCount.writersFor(ranges, finest, writers);
    return base + (int) ((long) bufferId * w / finest);
  }
}
