package org.spatialingest.geometry;

import java.io.Serializable;

/**
 * Maps a point to its index on a Hilbert curve of order 31 over a fixed extent (CRS84 by default), so rows sorted by
 * the key are spatially clustered and the bbox min/max statistics of each row group stay tight.
 *
 * <p>Coordinates outside the extent are clamped to its edge; NaN maps to 0. The transform computes the key and the
 * sink sorts by it: this is the one definition of the spatial key.
 */
public final class HilbertCurve implements Serializable {
  private static final int ORDER = 31;
  private static final long CELLS = 1L << ORDER;

  public static final HilbertCurve CRS84 = new HilbertCurve(-180, -90, 180, 90);

  private final double minX;
  private final double minY;
  private final double spanX;
  private final double spanY;

  public HilbertCurve(double minX, double minY, double maxX, double maxY) {
    if (!(maxX > minX) || !(maxY > minY)) {
      throw new IllegalArgumentException("extent must have max > min, was " + minX + "," + minY + "," + maxX + ","
          + maxY);
    }
    this.minX = minX;
    this.minY = minY;
    this.spanX = maxX - minX;
    this.spanY = maxY - minY;
  }

  /** The Hilbert index (0 .. 2^62 - 1) of the cell holding (x, y). */
  public long key(double x, double y) {
    return index(cell(x, minX, spanX), cell(y, minY, spanY));
  }

  private static long cell(double v, double min, double span) {
    if (Double.isNaN(v)) {
      return 0;
    }
    double t = (v - min) / span;
    long c = (long) (t * CELLS);
    return Math.max(0, Math.min(CELLS - 1, c));
  }

  /** Classic rotate-and-accumulate conversion of cell (x, y) to its distance along the curve. */
  static long index(long x, long y) {
    long d = 0;
    for (long s = CELLS >>> 1; s > 0; s >>>= 1) {
      long rx = (x & s) > 0 ? 1 : 0;
      long ry = (y & s) > 0 ? 1 : 0;
      d += s * s * ((3 * rx) ^ ry);
      if (ry == 0) {
        if (rx == 1) {
          x = CELLS - 1 - x;
          y = CELLS - 1 - y;
        }
        long t = x;
        x = y;
        y = t;
      }
    }
    return d;
  }
}
