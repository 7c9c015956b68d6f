package org.spatialingest.sink.distribution;

import java.util.Arrays;

/**
 * The sort keys (Hilbert keys) one subtask saw most recently, and the boundaries that cut them into
 * ranges of equal row counts: ranges follow where the data is, so a busy city is split over several
 * ranges while empty oceans share one.
 *
 * <p>Cost: {@link #add} is an array store; {@link #refresh} sorts a copy of the sample (4,096
 * longs, well under a millisecond), called about once a second.
 */
final class KeySample {
  static final int SIZE = 4096;
  private final long[] ring = new long[SIZE];
  private int next;
  private int filled;
  private long[] sorted = new long[0];

  void add(long key) {
    ring[next] = key;
    next = (next + 1) % SIZE;
    filled = Math.min(SIZE, filled + 1);
  }

  /** Takes the current sample as the one {@link #boundaries} cuts. */
  void refresh() {
    sorted = Arrays.copyOf(ring, filled);
    Arrays.sort(sorted);
  }

  /** Keys seen in the sample {@link #boundaries} uses. */
  int size() {
    return sorted.length;
  }

  /**
   * The {@code ranges - 1} ascending keys that cut the sample into {@code ranges} ranges of equal
   * counts; range {@code i} holds the keys {@code k} with {@code boundaries[i - 1] <= k <
   * boundaries[i]}. Empty for one range or before any sample.
   */
  long[] boundaries(int ranges) {
    if (ranges <= 1 || sorted.length == 0) {
      return new long[0];
    }
    long[] b = new long[ranges - 1];
    for (int i = 1; i < ranges; i++) {
      b[i - 1] = sorted[(int) ((long) i * sorted.length / ranges)];
    }
    return b;
  }

  /** The range of {@code key} among {@code boundaries} (0 to {@code boundaries.length}). */
  static int rangeOf(long[] boundaries, long key) {
    int lo = 0;
    int hi = boundaries.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (boundaries[mid] <= key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
