package org.spatialingest.sink.distribution;

import java.io.Serializable;
import org.spatialingest.sizing.SizingBounds;

/**
 * How many key ranges a partition is split into: as many as its bytes per L fill files of T, so
 * files per commit follow bytes / T and not the number of writers. One range (one writer) while a
 * partition brings less than two files' worth per L; never more than the writers can hold open
 * within M and {@code sink.max-open-partitions}. While the rows arriving are older than L (a
 * backlog: after downtime, or one writer cannot keep up) at least one range per writer, so catching
 * up uses every writer; files then close by size anyway.
 *
 * @param bytesPerRange buffered bytes one range must bring per L: what encodes to T, or M if that
 *     is smaller (a writer flushes at M anyway)
 * @param maxRanges ranges the writers can hold: writers × buffers each can keep open for one
 *     partition (half its open-partition limit, so the next time partition fits too, at most {@link
 *     #MAX_RANGES_PER_WRITER}, and no more than M holds at {@code bytesPerRange} each)
 * @param latencyMillis L
 * @param encodedPerBufferedByte the Parquet/buffered byte ratio it was computed with (0: unknown,
 *     taken as 1)
 */
record RangeCount(
    long bytesPerRange,
    int maxRanges,
    int writers,
    long latencyMillis,
    double encodedPerBufferedByte)
    implements Serializable {

  /**
   * The most ranges of one partition a writer holds: what the distribution benchmark measured
   * (benchmarks.md, "The writers' exchange"), when it was half the then default open-partition
   * limit of 8.
   */
  static final int MAX_RANGES_PER_WRITER = 4;

  static RangeCount of(
      SizingBounds bounds, double encodedPerBufferedByte, int writers, int maxOpenPartitions) {
    long perRange =
        Math.min(bounds.bufferedBytesForTargetFile(encodedPerBufferedByte), bounds.memoryBytes());
    long perWriterByMemory = Math.max(1, bounds.memoryBytes() / perRange);
    int perWriterByLimit = Math.min(MAX_RANGES_PER_WRITER, maxOpenPartitions / 2);
    int perWriter = (int) Math.max(1, Math.min(perWriterByLimit, perWriterByMemory));
    int w = Math.max(1, writers);
    return new RangeCount(
        perRange, w * perWriter, w, bounds.maxLatency().toMillis(), encodedPerBufferedByte);
  }

  /**
   * Ranges for a partition that receives {@code bytesPerSecond} buffered bytes per second (all
   * subtasks together), the newest of them {@code newestAgeMillis} old on arrival.
   */
  int ranges(double bytesPerSecond, long newestAgeMillis) {
    double perLatency = bytesPerSecond * latencyMillis / 1000.0;
    long ranges = (long) Math.floor(perLatency / bytesPerRange);
    boolean backlog = newestAgeMillis > latencyMillis;
    if (backlog) {
      ranges = Math.max(ranges, writers);
    }
    int powerOfTwo = Integer.highestOneBit((int) Math.max(1, Math.min(maxRanges, ranges)));
    if (backlog && powerOfTwo < writers && powerOfTwo * 2 <= maxRanges) {
      powerOfTwo *= 2;
    }
    return powerOfTwo;
  }

  /**
   * The most ranges {@link #ranges} returns: a power of two. Range {@code j} of {@code k} is ranges
   * {@code j * finest / k} to {@code (j + 1) * finest / k - 1} of the finest split, so a row keeps
   * its buffer id ({@code j * finest / k}) when the count halves or doubles, and a file never mixes
   * rows of two areas that a count change swapped.
   */
  int finest() {
    return Integer.highestOneBit(Math.max(1, maxRanges));
  }
}
