package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.Polygon;
import org.locationtech.jts.operation.valid.IsValidOp;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.TransformConfig;

/**
 * Adversarial shapes against the default geometry budget: each is refused before the JTS step that
 * would stall, or processed. No timing assertions (times are in the README); the counts the budget
 * relies on are checked instead.
 */
class GeometryBudgetTest {
  private static final GeometryBudget BUDGET = GeometryBudget.DEFAULT;

  private static GeometryChain chain(String... keyValues) {
    return chain(BUDGET, keyValues);
  }

  private static GeometryChain chain(GeometryBudget budget, String... keyValues) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put(keyValues[i], keyValues[i + 1]);
    }
    m.putIfAbsent("transform.max-vertices", "2000000");
    TransformConfig config = JobConfig.fromMap(m).transform();
    return new GeometryChain(config, budget);
  }

  private static RecordRejectedException tooComplex(GeometryChain chain, Geometry g) {
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> chain.apply(g));
    assertThat(e)
        .as("%s of %d vertices is refused", g.getGeometryType(), g.getNumPoints())
        .isNotNull();
    assertThat(e.reason()).as(e.getMessage()).isEqualTo(RejectReason.GEOMETRY_TOO_COMPLEX);
    return e;
  }

  @Test
  void theDeepSpikeStarIsRefusedBeforeValidation() {
    Polygon star = Shapes.deepStar(5, 45, 120_000, 1);
    RecordRejectedException e = tooComplex(chain(), star);
    assertThat(e.getMessage())
        .isEqualTo(
            "Polygon of 120,001 vertices needs more than 20,000,000 edge-pair tests to"
                + " validate (its segments' bounding boxes overlap that often: deep spikes, or rings crossing or touching"
                + " everywhere); the budget is 20,000,000 per record (transform.budget-pair-tests)");
    // the same shape with fewer vertices fits and is validated as before
    assertThat(IsValidOp.isValid(Shapes.deepStar(5, 45, 5_000, 1))).isTrue();
    assertThat(
            catchThrowableOfType(
                RecordRejectedException.class,
                () -> chain().apply(Shapes.deepStar(5, 45, 5_000, 1))))
        .isNull();
  }

  @Test
  void selfTouchingAndSelfCrossingRingsAreRefusedBeforeRepair() {
    assertThat(tooComplex(chain(), Shapes.touchingStar(5, 45, 2_000, 1)).getMessage())
        .isEqualTo(
            "invalid Polygon whose rings cross or touch at more than 1,000 points; repair is budgeted at 1,000"
                + " rings, 1,000 crossings and 5,000,000 edge-pair tests per record (transform.budget-repair-size, transform.budget-repair-pair-tests)");
    assertThat(tooComplex(chain(), Shapes.crossingStar(5, 45, 201, 100, 1)).getMessage())
        .contains("more than 1,000 points");
    // a deep-spike star that fits the validation budget but crosses itself once is too costly to
    // repair
    Polygon deep = Shapes.deepStar(5, 45, 16_000, 1);
    Coordinate[] c = deep.getExteriorRing().getCoordinates().clone();
    Coordinate swap = c[100];
    c[100] = c[102];
    c[102] = swap;
    assertThat(tooComplex(chain(), Shapes.F.createPolygon(c)).getMessage())
        .isEqualTo(
            "invalid Polygon of 16,001"
                + " vertices needs more than 5,000,000 edge-pair tests to repair; repair is budgeted at 1,000 rings, 1,000"
                + " crossings and 5,000,000 edge-pair tests per record (transform.budget-repair-size, transform.budget-repair-pair-tests)");
    // a ring touching itself everywhere also has its edge boxes all overlapping: refused before
    // validation
    assertThat(tooComplex(chain(), Shapes.touchingStar(5, 45, 40_000, 1)).getMessage())
        .contains("edge-pair tests");
    // without repair the cheap ones are plain invalid geometries
    RecordRejectedException e =
        catchThrowableOfType(
            RecordRejectedException.class,
            () -> chain("transform.repair", "false").apply(Shapes.touchingStar(5, 45, 2_000, 1)));
    assertThat(e.reason()).isEqualTo(RejectReason.INVALID_GEOMETRY);
  }

  @Test
  void manyHolesAreValidatedButRepairAndTopologySimplificationAreBudgeted() throws Exception {
    Polygon disjoint = Shapes.gridOfHoles(5, 45, 60, 16, 0.5, false);
    // 3,600 holes: validated within budget
    assertThat(chain().apply(disjoint).geometry().getNumGeometries()).isEqualTo(1);
    assertThat(tooComplex(chain(), Shapes.gridOfHoles(5, 45, 40, 16, 1.6, false)).getMessage())
        .isEqualTo(
            "invalid Polygon with 1,601 rings; repair is budgeted at 1,000 rings, 1,000 crossings and"
                + " 5,000,000 edge-pair tests per record (transform.budget-repair-size, transform.budget-repair-pair-tests)");
    GeometryChain bowTieWithHoles = chain();
    GeometryChain.Result result =
        bowTieWithHoles.apply(Shapes.gridOfHoles(5, 45, 20, 16, 0.5, true));
    Geometry repaired = result.geometry();
    assertThat(result.repaired()).isTrue();
    assertThat(IsValidOp.isValid(repaired)).isTrue();
    // JTS's jump check walks every ring for every simplified section: 10,001 rings × 170,005
    // vertices is refused
    GeometryChain topo =
        chain("transform.simplify-tolerance", "0.001", "transform.simplify-min-vertices", "100");
    assertThat(tooComplex(topo, Shapes.gridOfHoles(5, 45, 100, 16, 0.3, false)).getMessage())
        .isEqualTo(
            "topology-preserving simplification of Polygon with 10,001 rings and 170,005 vertices needs about"
                + " 1,700,220,005 ring-vertex tests; the budget is 20,000,000 per record (transform.budget-pair-tests)");
    assertThat(topo.apply(Shapes.gridOfHoles(5, 45, 20, 16, 0.5, false)).geometry().getNumPoints())
        .isPositive();
  }

  @Test
  void theVertexBudgetCoversOnlyTheExpensiveSteps() throws Exception {
    GeometryBudget small =
        new GeometryBudget(
            1_000,
            BUDGET.pairTests(),
            BUDGET.repairSize(),
            BUDGET.repairPairTests(),
            BUDGET.millis());
    Polygon star = Shapes.star(5, 45, 2_000, 1);
    assertThat(tooComplex(chain(small), star).getMessage())
        .isEqualTo(
            "Polygon has 2,001 vertices; validation, repair"
                + " and simplification are budgeted at 1,000 vertices per record (transform.budget-vertices)");
    assertThat(
            chain(small, "transform.validate", "false", "transform.repair", "false")
                .apply(star)
                .geometry())
        .isSameAs(star);
  }

  @Test
  void aStepStartsOnlyWithinTheTimeBudget() {
    GeometryBudget none =
        new GeometryBudget(
            BUDGET.vertices(),
            BUDGET.pairTests(),
            BUDGET.repairSize(),
            BUDGET.repairPairTests(),
            0);
    assertThat(tooComplex(chain(none), Shapes.star(5, 45, 100, 1)).getMessage())
        .matches(
            "geometry steps used \\d+ ms of CPU before validation; the time budget is 0 ms per record \\(transform.budget-time\\)");
    assertThat(
            tooComplex(
                    chain(
                        none,
                        "transform.validate",
                        "false",
                        "transform.repair",
                        "false",
                        "transform.simplify-tolerance",
                        "0.01",
                        "transform.simplify-min-vertices",
                        "10"),
                    Shapes.star(5, 45, 100, 1))
                .getMessage())
        .contains("before simplification");
    // points skip every expensive step, so no budget applies to them
    assertThat(
            catchThrowableOfType(
                RecordRejectedException.class,
                () -> chain(none).apply(Shapes.F.createPoint(new Coordinate(1, 2)))))
        .isNull();
  }

  @Test
  void theGridBoundIsNeverBelowTheExactCount() {
    Random r = new Random(7);
    List<Geometry> shapes =
        List.of(
            Shapes.star(0, 0, 5_000, 1),
            Shapes.deepStar(0, 0, 3_000, 1),
            Shapes.touchingStar(0, 0, 1_000, 1),
            Shapes.crossingStar(0, 0, 301, 150, 1),
            Shapes.crossingStar(0, 0, 1_001, 7, 1),
            Shapes.gridOfHoles(0, 0, 20, 16, 1.6, true),
            Shapes.bowTie(0, 0, 1, 2_000),
            Shapes.antimeridian(-17, 2, 500),
            Shapes.box(0, 0, 10, 1, 3_000),
            randomWalk(r, 3_000),
            randomWalk(r, 20_000));
    for (Geometry g : shapes) {
      List<Coordinate[]> lines = GeometryCost.linework(g, true);
      long exact = GeometryCost.edgePairsAtMost(lines, Long.MAX_VALUE - 1);
      long bound = GeometryCost.gridBound(lines);
      assertThat(bound)
          .as(
              "%s of %d vertices: bound %d, exact %d",
              g.getGeometryType(), g.getNumPoints(), bound, exact)
          .isGreaterThanOrEqualTo(exact);
    }
  }

  @Test
  void crossingsAreCountedBetweenNonNeighbouringSegments() {
    assertThat(
            GeometryCost.crossingsAtMost(GeometryCost.linework(Shapes.bowTie(0, 0, 1), false), 100))
        .isEqualTo(1);
    assertThat(
            GeometryCost.crossingsAtMost(
                GeometryCost.linework(Shapes.star(0, 0, 1_000, 1), false), 100))
        .isZero();
    // {7/3} crosses each edge with 4 others: 7·4/2 = 14 crossings
    assertThat(
            GeometryCost.crossingsAtMost(
                GeometryCost.linework(Shapes.crossingStar(0, 0, 7, 3, 1), false), 100))
        .isEqualTo(14);
    assertThat(
            GeometryCost.crossingsAtMost(
                GeometryCost.linework(Shapes.crossingStar(0, 0, 201, 100, 1), false), 1_000))
        .isEqualTo(GeometryCost.OVER);
  }

  /**
   * A random walk line (crossing itself often): lines count only for the topology-preserving
   * simplifier.
   */
  private static Geometry randomWalk(Random r, int n) {
    Coordinate[] c = new Coordinate[n];
    double x = 0;
    double y = 0;
    for (int i = 0; i < n; i++) {
      x += r.nextGaussian() * 0.01;
      y += r.nextGaussian() * 0.01;
      c[i] = new Coordinate(x, y);
    }
    return Shapes.F.createLineString(c);
  }
}
