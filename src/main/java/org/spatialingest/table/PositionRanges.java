package org.spatialingest.table;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;

/**
 * A set of source positions (file lines) kept as sorted disjoint ranges, so a file whose lines are
 * all committed costs one range however long it is. Positions may be added in any order; they wait
 * in a small buffer that is merged into the ranges when full, so memory stays about 16 bytes per
 * range plus at most {@value #MAX_PENDING} waiting positions.
 */
public final class PositionRanges implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int MAX_PENDING = 1024;

  /** [start, end) pairs, flattened and sorted, disjoint and not adjacent */
  private long[] ranges = new long[0];

  private long[] pending = new long[4];
  private int pendingSize;

  void add(long position) {
    if (pendingSize == pending.length) {
      if (pending.length < MAX_PENDING) {
        pending = Arrays.copyOf(pending, pending.length * 2);
      } else {
        merge();
      }
    }
    pending[pendingSize++] = position;
  }

  /** Merges what waits; then {@link #contains} answers. */
  PositionRanges done() {
    merge();
    pending = new long[0];
    return this;
  }

  public boolean contains(long position) {
    // the last range starting at or before position
    int lo = 0;
    int hi = ranges.length / 2 - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (ranges[2 * mid] <= position) {
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return hi >= 0 && position < ranges[2 * hi + 1];
  }

  /** How many positions the set holds. */
  public long count() {
    long n = 0;
    for (int i = 0; i < ranges.length; i += 2) {
      n += ranges[i + 1] - ranges[i];
    }
    return n;
  }

  /**
   * How many positions in {@code [from, to)} at least one of {@code sets} holds (each {@link
   * #done}): the sets of one file under its paths.
   */
  public static long countIn(List<PositionRanges> sets, long from, long to) {
    int n = 0;
    for (PositionRanges s : sets) {
      n += s.ranges.length;
    }
    long[] all = new long[n];
    int at = 0;
    for (PositionRanges s : sets) {
      System.arraycopy(s.ranges, 0, all, at, s.ranges.length);
      at += s.ranges.length;
    }
    if (sets.size() > 1) {
      // sort the [start, end) pairs by start
      long[][] pairs = new long[n / 2][];
      for (int i = 0; i < pairs.length; i++) {
        pairs[i] = new long[] {all[2 * i], all[2 * i + 1]};
      }
      Arrays.sort(pairs, (x, y) -> Long.compare(x[0], y[0]));
      for (int i = 0; i < pairs.length; i++) {
        all[2 * i] = pairs[i][0];
        all[2 * i + 1] = pairs[i][1];
      }
    }
    long count = 0;
    long covered = from; // positions below it are counted (or outside)
    for (int i = 0; i < n; i += 2) {
      long start = Math.max(all[i], covered);
      long end = Math.min(all[i + 1], to);
      if (end > start) {
        count += end - start;
        covered = end;
      }
    }
    return count;
  }

  public int rangeCount() {
    return ranges.length / 2;
  }

  private void merge() {
    if (pendingSize == 0) {
      return;
    }
    long[] points = Arrays.copyOf(pending, pendingSize);
    Arrays.sort(points);
    pendingSize = 0;
    long[] out = new long[ranges.length + 2 * points.length];
    int n = 0;
    int r = 0;
    int p = 0;
    while (r < ranges.length || p < points.length) {
      long start;
      long end;
      if (p == points.length || r < ranges.length && ranges[r] <= points[p]) {
        start = ranges[r];
        end = ranges[r + 1];
        r += 2;
      } else {
        start = points[p];
        end = start + 1;
        p++;
      }
      if (n > 0 && start <= out[n - 1]) {
        out[n - 1] = Math.max(out[n - 1], end);
      } else {
        out[n++] = start;
        out[n++] = end;
      }
    }
    ranges = Arrays.copyOf(out, n);
  }
}
