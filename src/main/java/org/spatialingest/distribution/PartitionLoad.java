package org.spatialingest.distribution;

/**
 * What one subtask knows of one partition of one table: the bytes it routed there recently (a rate
 * smoothed over about three refreshes), how many key ranges that makes, and their boundaries.
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
  int ranges = 1;
  long[] boundaries = new long[0];

  /**
   * @param base the partition's hash: range {@code i} goes to writer {@code (base + i) mod writers}
   */
  PartitionLoad(int base) {
    this.base = base;
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
    bytesPerSecond =
        bytesPerSecond < 0 ? rate : bytesPerSecond * (1 - SMOOTHING) + rate * SMOOTHING;
    idleWindows = bytesInWindow == 0 ? idleWindows + 1 : 0;
    bytesInWindow = 0;
    return bytesPerSecond;
  }

  boolean idle() {
    return idleWindows >= IDLE_WINDOWS;
  }
}
