package org.spatialingest.distribution;

import java.util.Arrays;
import java.util.List;

/**
 * Merges weighted key samples into {@link #COUNT} keys at equal steps of weight (the keys'
 * empirical quantiles), and cuts such quantiles into range boundaries. A subtask's sample of {@code
 * n} keys out of {@code rows} rows weighs {@code rows / n} per key, so a busy subtask counts for
 * its rows, not for its sample size.
 */
final class Quantiles {
  /** Quantiles kept per partition: 8 KB, enough to cut up to a few hundred ranges. */
  static final int COUNT = 1024;

  private Quantiles() {}

  /**
   * The {@link #COUNT} quantiles of the samples {@code keys[i]}, each key weighing {@code
   * weights[i]}; empty when there is no key.
   */
  static long[] of(List<long[]> keys, List<Double> weights) {
    int n = 0;
    for (long[] k : keys) {
      n += k.length;
    }
    if (n == 0) {
      return new long[0];
    }
    long[] all = new long[n];
    double[] weightOf = new double[n];
    int i = 0;
    for (int s = 0; s < keys.size(); s++) {
      for (long key : keys.get(s)) {
        all[i] = key;
        weightOf[i++] = weights.get(s);
      }
    }
    Integer[] order = new Integer[n];
    for (int j = 0; j < n; j++) {
      order[j] = j;
    }
    Arrays.sort(order, (a, b) -> Long.compare(all[a], all[b]));
    double total = 0;
    for (double w : weightOf) {
      total += w;
    }
    long[] quantiles = new long[COUNT];
    double cumulative = 0;
    int next = 0;
    for (int j = 0; j < n && next < COUNT; j++) {
      cumulative += weightOf[order[j]];
      // quantile q is the first key whose cumulative weight passes q / COUNT of the total
      while (next < COUNT && cumulative > total * next / COUNT) {
        quantiles[next++] = all[order[j]];
      }
    }
    while (next < COUNT) {
      quantiles[next++] = all[order[n - 1]];
    }
    return quantiles;
  }

  /**
   * The {@code ranges - 1} boundaries that cut {@code quantiles} into {@code ranges} ranges of
   * equal weight (as {@link KeySample#boundaries} cuts a sample); empty for one range or no
   * quantiles. For powers of two the cuts nest: every boundary of {@code k} ranges is one of {@code
   * 2k}.
   */
  static long[] cut(long[] quantiles, int ranges) {
    if (ranges <= 1 || quantiles.length == 0) {
      return new long[0];
    }
    long[] b = new long[ranges - 1];
    for (int i = 1; i < ranges; i++) {
      b[i - 1] = quantiles[snap(quantiles, (int) ((long) i * quantiles.length / ranges), ranges)];
    }
    return b;
  }

  /**
   * Moves a cut at quantile {@code ideal} into the widest gap between neighbouring quantiles within
   * half a range of it, if that gap is {@link #GAP_FACTOR} times the mean gap there: a cut in an
   * empty stretch of keys (an ocean, the space between two cities' runs on the curve) keeps two
   * areas out of one writer's file, where a cut a few rows off would put a sliver of the next area
   * in it and stretch its key interval over the gap. Ranges then hold between half and 1.5 times
   * the mean; with no clear gap (evenly spread keys) the cut stays.
   */
  private static int snap(long[] quantiles, int ideal, int ranges) {
    int half = Math.max(1, quantiles.length / (2 * ranges));
    int from = Math.max(1, ideal - half);
    int to = Math.min(quantiles.length - 1, ideal + half);
    if (from > to) {
      return ideal;
    }
    int widest = ideal;
    double widestGap = -1;
    for (int k = from; k <= to; k++) {
      double gap = (double) quantiles[k] - (double) quantiles[k - 1];
      if (gap > widestGap) {
        widestGap = gap;
        widest = k;
      }
    }
    double meanGap = ((double) quantiles[to] - (double) quantiles[from - 1]) / (to - from + 1);
    return widestGap >= GAP_FACTOR * meanGap ? widest : ideal;
  }

  /** How much wider than the mean a gap must be for a cut to move into it. */
  static final double GAP_FACTOR = 4;
}
