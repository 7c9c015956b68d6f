package org.spatialingest.geometry;

import java.util.List;
import java.util.Locale;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.spatialingest.config.TransformConfig;

/**
 * What the expensive geometry steps (validation, repair, simplification) may spend on one record,
 * and the checks that refuse a record ({@link RejectReason#GEOMETRY_TOO_COMPLEX}) before a step
 * would overspend. JTS operations cannot be interrupted, so every limit is checked <em>before</em>
 * the step it protects, from counts that predict the step's work ({@link GeometryCost}). Costs
 * quoted are from this project's 2-core shared machine under load:
 *
 * <ul>
 *   <li>{@code vertices}: the steps run on at most this many vertices (validation alone is 1-1.5 µs
 *       a vertex);
 *   <li>{@code pairTests}: before validation or simplification, the edge pairs {@code IsValidOp}'s
 *       noder will test; before topology-preserving simplification, also vertices × rings (its jump
 *       check walks every ring for every flattened section). About 20-30 ns a test;
 *   <li>{@code repairSize} and {@code repairPairTests}: before repair, the rings, their edge pairs
 *       and the points where they cross or touch themselves or each other. {@code GeometryFixer}
 *       spends about 4× what {@code IsValidOp} spends per edge pair, up to ~0.2 ms per crossing
 *       (its output grows with them too), and more than linearly in the rings it has to union (a
 *       bow-tie shell with 4,900 holes: 2.5-6.5 s);
 *   <li>{@code millis}: a step starts only while the record's budgeted steps (from the first check
 *       on; parsing and reprojection are linear in the capped vertex count and not counted) have
 *       used less than this; a step that has started runs to its end, so a record can exceed it by
 *       one step.
 * </ul>
 *
 * The count limits are deterministic (a record gets the same answer on every run and replay); the
 * time limit is a backstop that depends on the machine's load. With the defaults the slowest shapes
 * that pass every count (a valid 500,000-vertex polygon with ~20 million edge pairs; a
 * self-crossing shell with 999 holes and 480,000 vertices, repaired) took 2.2-2.6 s here, and
 * anything beyond is refused in well under a second (the 120,000-vertex deep-spike star that took
 * ~23 s in {@code IsValidOp}: 0.34 s). Cost of the checks: O(n) for ordinary shapes (3-20% of
 * validation), at most O(n log n + pairTests) when the cheap bound is inconclusive.
 */
record GeometryBudget(
    int vertices, long pairTests, int repairSize, long repairPairTests, long millis) {
  /**
   * The defaults of the {@code transform.budget-*} keys: about a second of JTS work per record at
   * most.
   */
  static final GeometryBudget DEFAULT = of(TransformConfig.defaults().budget());

  static GeometryBudget of(TransformConfig.Budget b) {
    return new GeometryBudget(
        b.vertices(), b.pairTests(), b.repairSize(), b.repairPairTests(), b.millis());
  }

  /** Before any expensive step: the vertex count, then the edge pairs of {@code linework}. */
  void checkSize(Geometry g, List<Coordinate[]> linework) throws RecordRejectedException {
    int n = g.getNumPoints();
    if (n > vertices) {
      throw tooComplex(
          g.getGeometryType()
              + " has "
              + count(n)
              + " vertices; validation, repair and simplification"
              + " are budgeted at "
              + count(vertices)
              + " vertices per record (transform.budget-vertices)");
    }
    if (GeometryCost.edgePairsAtMost(linework, pairTests) == GeometryCost.OVER) {
      throw tooComplex(
          g.getGeometryType()
              + " of "
              + count(n)
              + " vertices needs more than "
              + count(pairTests)
              + " edge-pair tests to validate (its segments' bounding boxes overlap that often: deep spikes, or rings"
              + " crossing or touching everywhere); the budget is "
              + count(pairTests)
              + " per record (transform.budget-pair-tests)");
    }
  }

  /** Before repair: the rings, their edge pairs, then their crossings. */
  void checkRepair(Geometry g) throws RecordRejectedException {
    List<Coordinate[]> rings = GeometryCost.linework(g, false);
    if (rings.size() > repairSize) {
      throw tooComplex(
          "invalid "
              + g.getGeometryType()
              + " with "
              + count(rings.size())
              + " rings; "
              + repairBudget());
    }
    if (GeometryCost.edgePairsAtMost(rings, repairPairTests) == GeometryCost.OVER) {
      throw tooComplex(
          "invalid "
              + g.getGeometryType()
              + " of "
              + count(g.getNumPoints())
              + " vertices needs more"
              + " than "
              + count(repairPairTests)
              + " edge-pair tests to repair; "
              + repairBudget());
    }
    if (GeometryCost.crossingsAtMost(rings, repairSize) == GeometryCost.OVER) {
      throw tooComplex(
          "invalid "
              + g.getGeometryType()
              + " whose rings cross or touch at more than "
              + count(repairSize)
              + " points; "
              + repairBudget());
    }
  }

  private String repairBudget() {
    return "repair is budgeted at "
        + count(repairSize)
        + " rings, "
        + count(repairSize)
        + " crossings and "
        + count(repairPairTests)
        + " edge-pair tests per record (transform.budget-repair-size, "
        + "transform.budget-repair-pair-tests)";
  }

  /** Before topology-preserving simplification: vertices × rings (and lines). */
  void checkTopologySimplify(Geometry g) throws RecordRejectedException {
    long components = GeometryCost.linework(g, true).size();
    long n = g.getNumPoints();
    if (components > 1 && n * components > pairTests) {
      throw tooComplex(
          "topology-preserving simplification of "
              + g.getGeometryType()
              + " with "
              + count(components)
              + " rings and "
              + count(n)
              + " vertices needs about "
              + count(n * components)
              + " ring-vertex tests; the budget is "
              + count(pairTests)
              + " per record (transform.budget-pair-tests)");
    }
  }

  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();

  /**
   * The calling thread's CPU time, ns (wall time where the JVM cannot tell): what the time budget
   * counts, so a record's verdict does not depend on how busy the machine is (on wall time, a valid
   * 400-hole polygon whose repair takes ~0.2 s was refused while three test JVMs shared two cores).
   */
  static long cpuNanos() {
    return THREADS.isCurrentThreadCpuTimeSupported()
        ? THREADS.getCurrentThreadCpuTime()
        : System.nanoTime();
  }

  /**
   * Before {@code step}: the CPU time the record's geometry steps have used since {@code
   * startNanos} ({@link #cpuNanos}).
   */
  void checkTime(long startNanos, String step) throws RecordRejectedException {
    long used = (cpuNanos() - startNanos) / 1_000_000;
    if (used >= millis) {
      throw tooComplex(
          "geometry steps used "
              + count(used)
              + " ms of CPU before "
              + step
              + "; the time budget is "
              + count(millis)
              + " ms per record (transform.budget-time)");
    }
  }

  private static RecordRejectedException tooComplex(String message) {
    return new RecordRejectedException(RejectReason.GEOMETRY_TOO_COMPLEX, message);
  }

  private static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }
}
