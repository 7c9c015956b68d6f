package org.spatialingest.sink.distribution;

import java.io.Serializable;
import org.spatialingest.sizing.SizingBounds;

/**
 * How many key ranges a partition is split into: as many as its bytes per L fill files of T, so
 * files per commit follow bytes / T and not the number of writers. One range (one writer) while a
 * partition brings less than two files' worth per L; never more than the writers can hold open
 * within M and {@code sink.max-open-partitions}. While the rows arriving are older than L (a
 * backlog: after downtime, or one writer cannot keep up) the finest split, so catching up uses
 * every writer ({@link #writersFor}); files then close by size anyway.
 *
 * @param bytesPerRange buffered bytes one range must bring per L: what encodes to T, or M if that
 *     is smaller (a writer flushes at M anyway)
 * @param maxRanges ranges the writers can hold: writers × buffers each can keep open for one
 *     partition (half its open-partition limit, so the next time partition fits too, at most {@link
 *     #MAX_RANGES_PER_WRITER}, and no more than M holds at {@code bytesPerRange} each, or, while
 *     the ratio is unknown, at what encodes to T at {@link #UNKNOWN_RATIO})
 * @param latencyMillis L
 * @param encodedPerBufferedByte the Parquet/buffered byte ratio it was computed with (0: unknown,
 *     taken as 1, and as {@link #UNKNOWN_RATIO} for {@code maxRanges})
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

  /**
   * The Parquet/buffered byte ratio the cap on ranges per writer assumes while the table has none
   * (no commit of this sink yet): below the lowest the sink's files have shown (points, 0.24–0.30),
   * so that a writer is never given more ranges than M holds at what encodes to T. A range's bytes
   * per L ({@link #bytesPerRange}) keep ratio 1 as the writers do (a file never above T; they learn
   * the real ratio from their first file near T). With 1 in the cap too, a backfill of points at T
   * = 32 MB and M = 128 MB gave each writer four ranges of a quarter of M each: every buffer closed
   * by memory at ~9 MB of Parquet, 28 files for 302 MB (benchmarks.md, "A production-shaped
   * backfill"). Where M holds 16 T or more (T = 1 MB and M = 128 MB), the cap is {@link
   * #MAX_RANGES_PER_WRITER} either way.
   */
  static final double UNKNOWN_RATIO = 0.25;

  static RangeCount of(
      SizingBounds bounds, double encodedPerBufferedByte, int writers, int maxOpenPartitions) {
    long perRange =
        Math.min(bounds.bufferedBytesForTargetFile(encodedPerBufferedByte), bounds.memoryBytes());
    long mostPerRange =
        SizingBounds.isKnownRatio(encodedPerBufferedByte)
            ? perRange
            : Math.min(bounds.bufferedBytesForTargetFile(UNKNOWN_RATIO), bounds.memoryBytes());
    long perWriterByMemory = Math.max(1, bounds.memoryBytes() / mostPerRange);
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
    if (newestAgeMillis > latencyMillis) {
      ranges = maxRanges; // a backlog: the finest split, on every writer
    }
    return Integer.highestOneBit((int) Math.max(1, Math.min(maxRanges, ranges)));
  }

  /**
   * The writers a partition's {@code ranges} ranges (a power of two up to {@code finest}) go to: as
   * many as get a full share of the finest split each, {@code ceil(ranges * writers / finest)}, at
   * least 1 and at most {@code writers}. So a partition that brings few files' worth per L (or,
   * from a bounded input's sample, in all) fills a few writers with a block of neighbouring ranges
   * each, and each of them closes one remainder at L or at the end of input instead of every writer
   * closing one (issue #37 item 6: a clustered backfill of two days of about 8 files' worth each
   * made 22 files at 8 writers against 16 at 1 writer; with this rule each day's 16 ranges go to 4
   * of the 8 writers, and it made 18: benchmarks.md). A partition at the finest split, which a
   * backlog (rows older than L) always asks for, still uses every writer.
   *
   * <p>What it trades: the parallelism of a small partition. A backfill of a few days of little
   * data runs on a few writers while the others idle, and a live partition below the finest split
   * is written by fewer writers (each with its share of the finest split, at most {@link
   * #MAX_RANGES_PER_WRITER} ranges of {@link #bytesPerRange} per L). When a partition's count
   * changes, so do its writers: a buffer id then goes to another writer, and the old writer's open
   * buffer of it closes by L as any other (one more file, of the same keys).
   */
  static int writersFor(int ranges, int finest, int writers) {
    int w = Math.max(1, writers);
    long share = ((long) ranges * w + Math.max(1, finest) - 1) / Math.max(1, finest);
    return (int) Math.max(1, Math.min(w, share));
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
