package org.spatialingest.sink.distribution;

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
   * equal weight (as {@link KeySample#boundaries} cuts a sample), for {@code writers} writers;
   * empty for one range or no quantiles.
   *
   * <p>Two levels, because a range only decides a buffer but a writer's block of neighbouring
   * ranges decides a file's key interval: first the cuts between the writers' blocks ({@link
   * #blocks}), each moved into a wide gap of keys within {@link #SNAP_BLOCKS} of a block of its
   * place (an empty stretch between two areas: a block then holds whole areas, never a sliver of
   * the next one, even when the sample weighs the areas unevenly by a third or more); then each
   * block is cut into its ranges at equal weight ({@link #subdivide}).
   */
  static long[] cut(long[] quantiles, int ranges, int writers) {
    if (ranges <= 1 || quantiles.length == 0) {
      return new long[0];
    }
    int blocks = blocks(ranges, writers);
    int[] at = new int[blocks + 1];
    long[] startKeys = new long[blocks];
    startKeys[0] = Long.MIN_VALUE;
    at[blocks] = quantiles.length;
    for (int j = 1; j < blocks; j++) {
      // the remaining quantiles shared fairly over the remaining ranges: a cut moved into a gap
      // does not push the next ones off
      int first = firstRangeOfBlock(j - 1, ranges, blocks);
      int next = firstRangeOfBlock(j, ranges, blocks);
      int ideal =
          at[j - 1]
              + (int) ((long) (quantiles.length - at[j - 1]) * (next - first) / (ranges - first));
      int snapped = snap(quantiles, ideal, (int) (quantiles.length * SNAP_BLOCKS / blocks));
      at[j] = Math.max(at[j - 1], Math.abs(snapped));
      // in a gap, the cut goes to its middle: the next area's lowest sampled key would leave its
      // unsampled lower keys, a sliver, to the block before
      long key =
          snapped < 0 && at[j] == -snapped
              ? middle(quantiles[at[j] - 1], quantiles[at[j]])
              : quantiles[Math.min(at[j], quantiles.length - 1)];
      startKeys[j] = Math.max(startKeys[j - 1], key);
    }
    return subdivide(quantiles, at, startKeys, ranges);
  }

  /**
   * Keeps the cuts between the writers' blocks of {@code current} (cut for {@code currentRanges})
   * and cuts each block anew into its share of {@code ranges}: a change of the range count then
   * moves no row to another writer. Null when the block counts differ.
   */
  static long[] recutWithin(
      long[] quantiles, long[] current, int currentRanges, int ranges, int writers) {
    int blocks = blocks(ranges, writers);
    if (quantiles.length == 0
        || ranges <= 1
        || blocks != blocks(currentRanges, writers)
        || current.length != currentRanges - 1) {
      return null;
    }
    int[] at = new int[blocks + 1];
    long[] startKeys = new long[blocks];
    startKeys[0] = Long.MIN_VALUE;
    at[blocks] = quantiles.length;
    for (int j = 1; j < blocks; j++) {
      startKeys[j] =
          Math.max(startKeys[j - 1], current[firstRangeOfBlock(j, currentRanges, blocks) - 1]);
      at[j] = Math.max(at[j - 1], firstAtOrAbove(quantiles, startKeys[j]));
    }
    return subdivide(quantiles, at, startKeys, ranges);
  }

  /** The writers' blocks a partition's ranges form: one per writer, at most one per range. */
  static int blocks(int ranges, int writers) {
    return Math.max(1, Math.min(ranges, writers));
  }

  /**
   * The first range of block {@code j}: range {@code r} goes to writer offset {@code r * writers /
   * ranges} ({@link PartitionPlacement#slot}), so block {@code j} starts at {@code ceil(j * ranges
   * / blocks)}.
   */
  static int firstRangeOfBlock(int j, int ranges, int blocks) {
    return (int) (((long) j * ranges + blocks - 1) / blocks);
  }

  /** The cuts between the blocks of {@code boundaries} (cut for {@code ranges}), ascending. */
  static long[] blockCuts(long[] boundaries, int ranges, int writers) {
    int blocks = blocks(ranges, writers);
    long[] cuts = new long[blocks - 1];
    for (int j = 1; j < blocks; j++) {
      cuts[j - 1] = boundaries[firstRangeOfBlock(j, ranges, blocks) - 1];
    }
    return cuts;
  }

  /**
   * Boundaries for {@code ranges} ranges whose blocks start at quantile indexes {@code at} (block
   * {@code j} holds quantiles {@code at[j]} to {@code at[j + 1] - 1}) and at keys {@code
   * startKeys[j]} (for {@code j > 0}), each block cut into its ranges at equal weight.
   */
  private static long[] subdivide(long[] quantiles, int[] at, long[] startKeys, int ranges) {
    int blocks = at.length - 1;
    long[] b = new long[ranges - 1];
    for (int j = 0; j < blocks; j++) {
      int first = firstRangeOfBlock(j, ranges, blocks);
      int next = firstRangeOfBlock(j + 1, ranges, blocks);
      for (int r = Math.max(1, first); r < next; r++) {
        if (r == first) {
          b[r - 1] = startKeys[j];
          continue;
        }
        int ideal = at[j] + (int) ((long) (r - first) * (at[j + 1] - at[j]) / (next - first));
        // within a block too a cut goes into a gap within half a range, as the ranges' files of T
        // each then cover one area
        int snapped = snap(quantiles, ideal, quantiles.length / (2 * ranges));
        int index =
            Math.min(Math.max(Math.abs(snapped), at[j] + 1), Math.max(at[j + 1] - 1, at[j] + 1));
        long key =
            snapped < 0 && index == -snapped
                ? middle(quantiles[index - 1], quantiles[index])
                : quantiles[Math.min(index, quantiles.length - 1)];
        b[r - 1] = Math.max(Math.max(startKeys[j], r > 1 ? b[r - 2] : Long.MIN_VALUE), key);
      }
    }
    return b;
  }

  private static long middle(long a, long b) {
    return (a >> 1) + (b >> 1) + (a & b & 1);
  }

  private static int firstAtOrAbove(long[] quantiles, long key) {
    int lo = 0;
    int hi = quantiles.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (quantiles[mid] < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * Moves a cut at quantile {@code ideal} into a gap between neighbouring quantiles within {@code
   * reach} quantiles of it ({@link #SNAP_BLOCKS} of a block for a cut between writers' blocks, half
   * a range within a block), if that gap is {@link #GAP_FACTOR} times the mean gap there: a cut in
   * an empty stretch of keys (an ocean, the space between two areas' runs on the curve) keeps two
   * areas out of one writer's file, where a cut a few rows off would put a sliver of the next area
   * in it and stretch its key interval over the gap. The window is that wide because early samples
   * weigh areas unevenly (by half or more on a loaded machine, where the sources' first seconds
   * differ in speed); of the gaps the widest wins, discounted by its distance from the ideal cut so
   * that a nearby gap keeps the blocks even. With no clear gap (evenly spread keys) the cut stays.
   */
  /** Returns the cut's quantile index, negated when it lies in a gap ({@code > 0} then). */
  private static int snap(long[] quantiles, int ideal, int reach) {
    reach = Math.max(1, reach);
    int from = Math.max(1, ideal - reach);
    int to = Math.min(quantiles.length - 1, ideal + reach);
    if (from > to) {
      return ideal;
    }
    int best = ideal;
    double bestScore = -1;
    for (int k = from; k <= to; k++) {
      double gap = (double) quantiles[k] - (double) quantiles[k - 1];
      double score = gap * (1 - 0.5 * Math.abs(k - ideal) / (reach + 1.0));
      if (score > bestScore) {
        bestScore = score;
        best = k;
      }
    }
    double gap = (double) quantiles[best] - (double) quantiles[best - 1];
    double meanGap = ((double) quantiles[to] - (double) quantiles[from - 1]) / (to - from + 1);
    return gap >= GAP_FACTOR * meanGap ? -best : ideal;
  }

  /** How far a cut between two writers' blocks may move into a gap, in blocks. */
  static final double SNAP_BLOCKS = 0.75;

  /** How much wider than the mean a gap must be for a cut to move into it. */
  static final double GAP_FACTOR = 4;
}
