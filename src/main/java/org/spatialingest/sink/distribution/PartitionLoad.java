package org.spatialingest.sink.distribution;

/**
 * The load of one partition of one table: the bytes routed there recently (a rate smoothed over
 * about three windows), how many key ranges that makes, and their boundaries. A subtask keeps one
 * per partition for its fallback (its own rows, windows of a second); the {@link RangeCoordinator}
 * keeps one per partition for all subtasks (windows between merges).
 */
final class PartitionLoad {
  /** Weight of the newest refresh window in the smoothed rate. */
  private static final double SMOOTHING = 0.3;

  /** Windows without a row after which a partition is forgotten (its hour has passed). */
  static final int IDLE_WINDOWS = 60;

  final int base;
  private long bytesInWindow;
  private long newestIngestMillis = Long.MIN_VALUE;
  private double bytesPerSecond = -1;
  private int idleWindows;
  private int windowsClosed;
  int ranges = 1;
  long[] boundaries = new long[0];

  /** a range count the rate has asked for, and in how many consecutive windows */
  private int proposed;

  private int proposedWindows;

  /**
   * Consecutive windows a new range count must be asked for before it applies (the first one
   * applies at once).
   */
  static final int STABLE_WINDOWS = 3;

  /**
   * @param base the partition's hash: the writer its first key range goes to
   */
  PartitionLoad(int base) {
    this.base = base;
  }

  /** A load restored from the coordinator's checkpoint: its count and rate carry on. */
  PartitionLoad(int ranges, double bytesPerSecond, long newestIngestMillis) {
    this.base = 0;
    this.ranges = ranges;
    this.bytesPerSecond = bytesPerSecond;
    this.newestIngestMillis = newestIngestMillis;
    this.windowsClosed = 1;
  }

  double bytesPerSecond() {
    return bytesPerSecond;
  }

  long newestIngestMillis() {
    return newestIngestMillis;
  }

  /** Counts a (sampled) row's bytes and its ingest time. */
  void add(long bytes, long ingestMillis) {
    bytesInWindow += bytes;
    newestIngestMillis = Math.max(newestIngestMillis, ingestMillis);
  }

  /**
   * How old the newest row seen so far was at {@code nowMillis}: above L, the rows arriving are a
   * backlog (after downtime, or the writers cannot keep up), and throughput matters more than file
   * count.
   */
  long newestAgeMillis(long nowMillis) {
    return newestIngestMillis == Long.MIN_VALUE ? 0 : nowMillis - newestIngestMillis;
  }

  /**
   * Closes a window of {@code seconds}; returns the smoothed rate of this subtask's bytes into the
   * partition. The first window counts fully, so a new partition with a backlog behind it splits at
   * once.
   */
  double closeWindow(double seconds) {
    double rate = bytesInWindow / Math.max(1e-3, seconds);
    boolean empty = bytesInWindow == 0;
    bytesInWindow = 0;
    return closeWindow(rate, empty);
  }

  /**
   * Closes a window whose rate is already known ({@code empty}: no row came in it); returns the
   * smoothed rate.
   */
  double closeWindow(double rate, boolean empty) {
    windowsClosed++;
    bytesPerSecond =
        bytesPerSecond < 0 ? rate : bytesPerSecond * (1 - SMOOTHING) + rate * SMOOTHING;
    idleWindows = empty ? idleWindows + 1 : 0;
    return bytesPerSecond;
  }

  /**
   * Takes {@code wanted} as the range count once it has been asked for {@link #STABLE_WINDOWS}
   * windows in a row (at once the first time): a rate near a threshold must not flip the split
   * every second, each flip moves the areas the ranges cover. Returns whether the count changed.
   */
  boolean propose(int wanted) {
    boolean first = windowsClosed <= 1;
    if (wanted == ranges) {
      proposedWindows = 0;
      return false;
    }
    proposedWindows = wanted == proposed ? proposedWindows + 1 : 1;
    proposed = wanted;
    if (first || proposedWindows >= STABLE_WINDOWS) {
      ranges = wanted;
      proposedWindows = 0;
      return true;
    }
    return false;
  }

  boolean idle() {
    return idleWindows >= IDLE_WINDOWS;
  }
}
