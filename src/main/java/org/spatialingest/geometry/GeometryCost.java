package org.spatialingest.geometry;

import java.util.ArrayList;
import java.util.List;
import org.locationtech.jts.algorithm.LineIntersector;
import org.locationtech.jts.algorithm.RobustLineIntersector;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryCollection;
import org.locationtech.jts.geom.LineString;
import org.locationtech.jts.geom.Polygon;
import org.locationtech.jts.index.chain.MonotoneChain;
import org.locationtech.jts.index.chain.MonotoneChainBuilder;
import org.locationtech.jts.index.chain.MonotoneChainOverlapAction;
import org.locationtech.jts.index.hprtree.HPRtree;

/**
 * Counts that predict the work of JTS's expensive steps before they run, so a record can be refused
 * instead of stalling the task thread. Stateless; every method allocates its own scratch.
 *
 * <p><b>Edge pairs</b> = pairs of segments whose bounding boxes overlap plus pairs of monotone
 * chains (JTS's runs of segments in one quadrant) whose boxes overlap. {@code IsValidOp} nodes the
 * rings with monotone chains in an {@code HPRtree} and tests exactly these candidates, so its time
 * is about (vertices + edge pairs) × a constant; a detailed but ordinary boundary has about 2 edge
 * pairs per vertex, a star with deep spikes has them in the square of its vertex count. {@link
 * #edgePairsAtMost} first bounds the count from above on a uniform grid in O(n) (a few percent of
 * the cost of validation), and counts exactly, like the noder, only when the bound is over the
 * limit.
 *
 * <p><b>Crossings</b> = points where two segments that are not neighbours in one ring meet (cross
 * or touch). {@code GeometryFixer} nodes at every one of them: its time and its output grow with
 * their number, up to the square of the vertex count (a ring of 2,000 vertices whose edges all
 * cross each other has about 2 million).
 */
final class GeometryCost {
  /** Stands for "more than the limit" (the counting stopped). */
  static final long OVER = Long.MAX_VALUE;

  private GeometryCost() {}

  /**
   * The coordinate arrays the expensive steps work on: every ring of every polygon, and every line
   * string too when {@code withLines} (only the topology-preserving simplifier looks at lines;
   * validating a line is linear).
   */
  static List<Coordinate[]> linework(Geometry g, boolean withLines) {
    List<Coordinate[]> out = new ArrayList<>();
    for (int i = 0; i < g.getNumGeometries(); i++) {
      Geometry part = g.getGeometryN(i);
      if (part instanceof Polygon p) {
        out.add(p.getExteriorRing().getCoordinates());
        for (int h = 0; h < p.getNumInteriorRing(); h++) {
          out.add(p.getInteriorRingN(h).getCoordinates());
        }
      } else if (withLines && part instanceof LineString l) {
        out.add(l.getCoordinates());
      } else if (part != g
          && part instanceof GeometryCollection) { // a collection inside a collection
        out.addAll(linework(part, withLines));
      }
    }
    return out;
  }

  /**
   * The number of edge pairs of {@code linework}, or {@link #OVER} as soon as it is known to exceed
   * {@code limit}. Cost: O(n) when the grid bound is under the limit; otherwise O(n log n + limit)
   * for the exact count.
   */
  static long edgePairsAtMost(List<Coordinate[]> linework, long limit) {
    long bound = gridBound(linework);
    if (bound <= limit) {
      return bound;
    }
    return scan(linework, limit, null);
  }

  /**
   * The number of crossings of {@code linework}, or {@link #OVER} once above {@code limit}. Cost:
   * one pass of JTS's noder over the edge pairs with a line intersection test each, stopped at the
   * limit; callers bound the edge pairs first ({@link #edgePairsAtMost}).
   */
  static long crossingsAtMost(List<Coordinate[]> linework, long limit) {
    return scan(linework, limit, new RobustLineIntersector());
  }

  /**
   * An upper bound of the edge pairs: segments and monotone chains are counted into the cells of a
   * uniform grid (cell side = 4 × the mean segment extent, occupied cells only, in a hash table)
   * that their boxes cover; two boxes that overlap share a cell, so the sum over cells of {@code
   * count·(count−1)/2} is at least the number of overlapping pairs. Returns {@link #OVER} when the
   * boxes cover more than {@code 8·segments} cells or more than {@code 2·segments} distinct ones
   * (long chains over a fine grid, e.g. a densified diagonal edge): the exact count, cheap for few
   * long chains, decides then. Memory: at most 64 bytes per segment, ~16 for ordinary shapes.
   */
  static long gridBound(List<Coordinate[]> linework) {
    Envelope env = new Envelope();
    long segments = 0;
    double extents = 0;
    for (Coordinate[] line : linework) {
      for (int i = 0; i < line.length; i++) {
        env.expandToInclude(line[i]);
        if (i > 0) {
          extents +=
              Math.max(Math.abs(line[i].x - line[i - 1].x), Math.abs(line[i].y - line[i - 1].y));
        }
      }
      segments += Math.max(0, line.length - 1);
    }
    if (segments == 0) {
      return 0;
    }
    double side =
        Math.max(4 * extents / segments, Math.max(env.getWidth(), env.getHeight()) / (1 << 30));
    if (!(side > 0)) { // every segment has zero length
      return segments * (segments - 1) / 2;
    }
    Grid grid = new Grid(env.getMinX(), env.getMinY(), side, (int) Math.min(1 << 26, segments));
    for (Coordinate[] line : linework) {
      if (!grid.addLine(line)) {
        return OVER;
      }
    }
    return grid.pairs();
  }

  /**
   * Cell counters of segment boxes and of chain boxes (chains split as {@code MonotoneChainBuilder}
   * splits them: where the quadrant of the direction changes), in one open-addressing table keyed
   * by column and row.
   */
  private static final class Grid {
    private static final long EMPTY = -1;
    private static final long SEGMENT = 1L << 32;
    private static final long CHAIN = 1;
    private final double minX;
    private final double minY;
    private final double side;
    private final long coverLimit;
    private final long cellLimit;
    private long covered;

    /**
     * Slot i: key at 2i, counts at 2i + 1 (segments in the high half, chains in the low half): one
     * cache line.
     */
    private long[] table;

    private int used;

    Grid(double minX, double minY, double side, int segments) {
      this.minX = minX;
      this.minY = minY;
      this.side = side;
      this.coverLimit = 8L * segments;
      this.cellLimit = 2L * segments + 16;
      table = empty(Integer.highestOneBit(Math.max(16, segments)));
    }

    private static long[] empty(int slots) {
      long[] t = new long[2 * slots];
      for (int i = 0; i < t.length; i += 2) {
        t[i] = EMPTY;
      }
      return t;
    }

    /** False once the covered cells exceed the limit. */
    boolean addLine(Coordinate[] c) {
      int quadrant = -1;
      double cx0 = 0;
      double cy0 = 0;
      double cx1 = 0;
      double cy1 = 0;
      for (int i = 0; i + 1 < c.length; i++) {
        Coordinate a = c[i];
        Coordinate b = c[i + 1];
        double x0 = Math.min(a.x, b.x);
        double x1 = Math.max(a.x, b.x);
        double y0 = Math.min(a.y, b.y);
        double y1 = Math.max(a.y, b.y);
        if (!add(false, x0, y0, x1, y1)) {
          return false;
        }
        double dx = b.x - a.x;
        double dy = b.y - a.y;
        if (dx == 0 && dy == 0) {
          continue; // a repeated point: inside the box of the chain around it
        }
        int q = dx >= 0 ? (dy >= 0 ? 0 : 3) : (dy >= 0 ? 1 : 2); // JTS Quadrant: NE, NW, SW, SE
        if (q == quadrant) {
          cx0 = Math.min(cx0, x0);
          cy0 = Math.min(cy0, y0);
          cx1 = Math.max(cx1, x1);
          cy1 = Math.max(cy1, y1);
          continue;
        }
        if (quadrant != -1 && !add(true, cx0, cy0, cx1, cy1)) {
          return false;
        }
        quadrant = q;
        cx0 = x0;
        cy0 = y0;
        cx1 = x1;
        cy1 = y1;
      }
      return quadrant == -1 || add(true, cx0, cy0, cx1, cy1);
    }

    private boolean add(boolean chain, double x0, double y0, double x1, double y1) {
      long ix0 = (long) ((x0 - minX) / side);
      long ix1 = (long) ((x1 - minX) / side);
      long iy0 = (long) ((y0 - minY) / side);
      long iy1 = (long) ((y1 - minY) / side);
      covered += (ix1 - ix0 + 1) * (iy1 - iy0 + 1);
      if (covered > coverLimit) {
        return false;
      }
      long increment = chain ? CHAIN : SEGMENT;
      for (long y = iy0; y <= iy1; y++) {
        for (long x = ix0; x <= ix1; x++) {
          int slot = slot(x << 31 | y);
          if (slot < 0) {
            return false;
          }
          table[slot + 1] += increment;
        }
      }
      return true;
    }

    /**
     * The index of {@code key} in the table, claimed if new (at most half full), or -1 past the
     * cell limit.
     */
    private int slot(long key) {
      int mask = table.length / 2 - 1;
      int i = (int) (key * 0x9E3779B97F4A7C15L >>> 32) & mask;
      while (table[2 * i] != key) {
        if (table[2 * i] == EMPTY) {
          if (used >= cellLimit) {
            return -1;
          }
          if ((used + 1) * 4 > table.length) {
            grow();
            return slot(key);
          }
          used++;
          table[2 * i] = key;
          return 2 * i;
        }
        i = (i + 1) & mask;
      }
      return 2 * i;
    }

    private void grow() {
      long[] old = table;
      table = empty(old.length); // twice the slots
      int mask = table.length / 2 - 1;
      for (int j = 0; j < old.length; j += 2) {
        if (old[j] != EMPTY) {
          int i = (int) (old[j] * 0x9E3779B97F4A7C15L >>> 32) & mask;
          while (table[2 * i] != EMPTY) {
            i = (i + 1) & mask;
          }
          table[2 * i] = old[j];
          table[2 * i + 1] = old[j + 1];
        }
      }
    }

    long pairs() {
      long sum = 0;
      for (int i = 1; i < table.length; i += 2) {
        long s = table[i] >>> 32;
        long k = table[i] & 0xFFFF_FFFFL;
        sum += s * (s - 1) / 2 + k * (k - 1) / 2;
      }
      return sum;
    }
  }

  /**
   * Thrown (preallocated, no stack trace) to leave an index query once the count is over the limit.
   */
  private static final RuntimeException STOP =
      new RuntimeException("over the limit", null, false, false) {};

  /**
   * JTS's own candidate search ({@code MonotoneChainBuilder} chains in an {@code HPRtree}, as
   * {@code MCIndexNoder} builds it): with {@code li == null} counts edge pairs, else crossings.
   * Stops once above {@code limit}.
   */
  private static long scan(List<Coordinate[]> linework, long limit, LineIntersector li) {
    List<MonotoneChain> chains = new ArrayList<>();
    HPRtree tree = new HPRtree();
    for (Coordinate[] line : linework) {
      for (Object o :
          MonotoneChainBuilder.getChains(
              line, line)) { // context: the line, to tell neighbours apart
        MonotoneChain chain = (MonotoneChain) o;
        chain.setId(chains.size());
        chains.add(chain);
        tree.insert(chain.getEnvelope(), chain);
      }
    }
    tree.build();
    Counter counter = new Counter(limit, li);
    try {
      for (MonotoneChain query : chains) {
        tree.query(
            query.getEnvelope(),
            item -> {
              MonotoneChain test = (MonotoneChain) item;
              if (test.getId() > query.getId()) {
                if (li == null) {
                  counter.add();
                }
                query.computeOverlaps(test, counter);
              }
            });
      }
    } catch (RuntimeException e) {
      if (e != STOP) {
        throw e;
      }
      return OVER;
    }
    return counter.count;
  }

  /** Counts segment pairs with overlapping boxes, or (with an intersector) their intersections. */
  private static final class Counter extends MonotoneChainOverlapAction {
    private final long limit;
    private final LineIntersector li;
    long count;

    Counter(long limit, LineIntersector li) {
      this.limit = limit;
      this.li = li;
    }

    void add() {
      if (++count > limit) {
        throw STOP;
      }
    }

    @Override
    public void overlap(MonotoneChain mc1, int i, MonotoneChain mc2, int j) {
      Coordinate[] c1 =
          (Coordinate[]) mc1.getContext(); // the whole line (getCoordinates() would copy the chain)
      Coordinate[] c2 = (Coordinate[]) mc2.getContext();
      Coordinate p0 = c1[i];
      Coordinate p1 = c1[i + 1];
      Coordinate q0 = c2[j];
      Coordinate q1 = c2[j + 1];
      if (!Envelope.intersects(p0, p1, q0, q1)) {
        return;
      }
      if (li == null) {
        add();
        return;
      }
      if (c1 == c2 && neighbours(i, j, c1.length - 1, c1[0].equals2D(c1[c1.length - 1]))) {
        return;
      }
      li.computeIntersection(p0, p1, q0, q1);
      if (li.hasIntersection()) {
        add();
      }
    }

    /**
     * Segments i and j of one line share a vertex by construction (consecutive, or last and first
     * of a ring).
     */
    private static boolean neighbours(int i, int j, int segments, boolean closed) {
      int d = Math.abs(i - j);
      return d <= 1 || (closed && d == segments - 1);
    }
  }
}
