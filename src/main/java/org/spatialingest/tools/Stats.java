package org.spatialingest.tools;

import java.util.Arrays;

/** Percentiles by linear interpolation between closest ranks (p50 is the usual median). */
public final class Stats {
  private Stats() {}

  /**
   * @param p in [0, 1]; NaN for no values
   */
  public static double percentile(long[] values, double p) {
    if (values.length == 0) {
      return Double.NaN;
    }
    long[] v = values.clone();
    Arrays.sort(v);
    double rank = p * (v.length - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    return v[lo] + (v[hi] - v[lo]) * (rank - lo);
  }

  public static double median(long[] values) {
    return percentile(values, 0.5);
  }
}
