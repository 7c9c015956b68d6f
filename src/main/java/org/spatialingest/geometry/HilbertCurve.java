package org.spatialingest.geometry;

import java.io.Serializable;

/**
 * Maps a point to its index on a Hilbert curve of order 31 over a fixed extent (CRS84 by default),
 * so rows sorted by the key are spatially clustered and the bbox min/max statistics of each row
 * group stay tight.
 *
 * <p>Coordinates outside the extent are clamped to its edge; NaN maps to 0. The transform computes
 * the key and the sink sorts by it: this is the one definition of the spatial key.
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
      throw new IllegalArgumentException(
          "extent must have max > min, was " + minX + "," + minY + "," + maxX + "," + maxY);
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

  /**
   * Levels of the curve per table step: each step reads 4 bits of x and of y and the orientation so
   * far, and gives 8 bits of the index and the next orientation.
   */
  private static final int STEP = 4;

  /**
   * {@code [orientation << 8 | xBits << 4 | yBits]} → {@code indexBits << 2 | nextOrientation},
   * where an orientation is {@code complemented << 1 | swapped}: what the classic
   * rotate-and-accumulate conversion (one level at a time: quadrant {@code (3 * rx) ^ ry}, then for
   * {@code ry == 0} complement both coordinates if {@code rx == 1} and swap them) has done to the
   * remaining bits. Built from that very rule, so the keys are the classic ones.
   */
  private static final short[] TABLE = new short[4 << (2 * STEP)];

  static {
    for (int orientation = 0; orientation < 4; orientation++) {
      for (int xBits = 0; xBits < 1 << STEP; xBits++) {
        for (int yBits = 0; yBits < 1 << STEP; yBits++) {
          int complemented = orientation >> 1;
          int swapped = orientation & 1;
          int d = 0;
          for (int bit = STEP - 1; bit >= 0; bit--) {
            int xb = (xBits >> bit) & 1;
            int yb = (yBits >> bit) & 1;
            int rx = (swapped == 1 ? yb : xb) ^ complemented;
            int ry = (swapped == 1 ? xb : yb) ^ complemented;
            d = (d << 2) | ((3 * rx) ^ ry);
            if (ry == 0) {
              complemented ^= rx;
              swapped ^= 1;
            }
          }
          TABLE[orientation << (2 * STEP) | xBits << STEP | yBits] =
              (short) (d << 2 | complemented << 1 | swapped);
        }
      }
    }
  }

  /**
   * The distance along the curve of cell (x, y), 0 <= x, y < 2^31: the classic
   * rotate-and-accumulate conversion, four levels per table look-up (8 look-ups instead of 31
   * branchy iterations). The 31 levels are read as 32 with a zero top level, which adds 0 to the
   * index and swaps once: starting swapped cancels that.
   */
  static long index(long x, long y) {
    int orientation = 1; // swapped: undone by the zero top level
    long d = 0;
    for (int shift = 32 - STEP; shift >= 0; shift -= STEP) {
      int e =
          TABLE[
              orientation << (2 * STEP)
                  | (int) ((x >>> shift) & 0xF) << STEP
                  | (int) ((y >>> shift) & 0xF)];
      d = (d << (2 * STEP)) | (e >>> 2);
      orientation = e & 3;
    }
    return d;
  }
}
