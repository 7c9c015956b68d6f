package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The table-driven Hilbert index is the classic rotate-and-accumulate one, cell for cell. */
class HilbertCurveTest {
  private static final long CELLS = 1L << 31;

  /**
   * The classic conversion, one level at a time (what the keys of existing tables were computed
   * with).
   */
  private static long classic(long x, long y) {
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

  @Test
  void sameIndexAsTheClassicConversion() {
    long[] edges = {
      0, 1, 2, 3, 15, 16, 17, CELLS / 2 - 1, CELLS / 2, CELLS / 2 + 1, CELLS - 2, CELLS - 1
    };
    for (long x : edges) {
      for (long y : edges) {
        assertThat(HilbertCurve.index(x, y)).as("cell %d, %d", x, y).isEqualTo(classic(x, y));
      }
    }
    for (int bit = 0; bit < 31; bit++) {
      long v = 1L << bit;
      assertThat(HilbertCurve.index(v, CELLS - 1 - v)).isEqualTo(classic(v, CELLS - 1 - v));
      assertThat(HilbertCurve.index(v - 1, v)).isEqualTo(classic(v - 1, v));
    }
    SplittableRandom random = new SplittableRandom(14);
    for (int i = 0; i < 1_000_000; i++) {
      long x = random.nextLong(CELLS);
      long y = random.nextLong(CELLS);
      assertThat(HilbertCurve.index(x, y)).isEqualTo(classic(x, y));
    }
    for (long x = 0;
        x < 64;
        x++) { // every cell of the low corner: neighbours on the curve are neighbours in space
      for (long y = 0; y < 64; y++) {
        assertThat(HilbertCurve.index(x, y)).isEqualTo(classic(x, y));
      }
    }
  }

  @Test
  void keysOfKnownPoints() {
    HilbertCurve c = HilbertCurve.CRS84;
    for (double[] p :
        new double[][] {
          {13.4050012, 52.5200066}, {-180, -90}, {180, 90}, {0, 0}, {-0.0, 1e-9}, {Double.NaN, 5}
        }) {
      long x = cell(p[0], -180, 360);
      long y = cell(p[1], -90, 180);
      assertThat(c.key(p[0], p[1])).isEqualTo(classic(x, y));
    }
  }

  private static long cell(double v, double min, double span) {
    return Double.isNaN(v)
        ? 0
        : Math.max(0, Math.min(CELLS - 1, (long) ((v - min) / span * CELLS)));
  }
}
