package org.spatialingest.bench;

import java.util.List;

/**
 * Nearest-rank percentiles of sorted values, the one definition every figure of the report uses.
 */
final class Percentiles {
  private Percentiles() {}

  /** The {@code p}-th percentile (nearest rank) of ascending {@code sorted}; 0 when empty. */
  static long of(List<Long> sorted, int p) {
    return sorted.isEmpty() ? 0 : sorted.get(index(sorted.size(), p));
  }

  /** The {@code p}-th percentile (nearest rank) of ascending {@code sorted}; NaN when empty. */
  static double of(double[] sorted, int p) {
    return sorted.length == 0 ? Double.NaN : sorted[index(sorted.length, p)];
  }

  private static int index(int size, int p) {
    int rank = (int) Math.ceil(p / 100.0 * size);
    return Math.max(0, Math.min(size - 1, rank - 1));
  }
}
