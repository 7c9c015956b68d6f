package org.spatialingest.geometry;

import org.locationtech.jts.geom.CoordinateSequence;
import org.locationtech.jts.geom.CoordinateSequenceFilter;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.Lineal;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygonal;
import org.locationtech.jts.geom.util.GeometryFixer;
import org.locationtech.jts.operation.valid.IsValidOp;
import org.locationtech.jts.simplify.DouglasPeuckerSimplifier;
import org.locationtech.jts.simplify.TopologyPreservingSimplifier;
import org.locationtech.proj4j.CRSFactory;
import org.locationtech.proj4j.CoordinateTransform;
import org.locationtech.proj4j.CoordinateTransformFactory;
import org.locationtech.proj4j.ProjCoordinate;
import org.spatialingest.config.TransformConfig;

/**
 * Transforms 2-4 of the chain on a parsed geometry, in order: reproject to CRS84, check the
 * coordinate range, validate and repair only invalid geometries, simplify above a vertex count.
 * Validation, repair and simplification run within a {@link GeometryBudget} (checked before each of
 * them; over budget = {@code geometry_too_complex}). Not thread-safe (one per parser).
 *
 * <p>Axis order: x = easting/longitude, y = northing/latitude for every CRS, input and output, as
 * in PROJ/proj4j (the EPSG database's latitude-first axis order of geographic CRSs is not applied).
 */
final class GeometryChain {
  private final TransformConfig config;
  private final GeometryBudget budget;
  private final Reprojector reprojector;

  /**
   * What {@link #apply} made of a geometry.
   *
   * @param repaired it was invalid and {@code GeometryFixer} repaired it
   * @param simplified simplification removed vertices
   */
  record Result(Geometry geometry, boolean repaired, boolean simplified) {}

  GeometryChain(TransformConfig config) {
    this(config, GeometryBudget.of(config.budget()));
  }

  GeometryChain(TransformConfig config, GeometryBudget budget) {
    this.config = config;
    this.budget = budget;
    this.reprojector =
        config.reprojectFrom() == null ? null : new Reprojector(config.reprojectFrom());
  }

  Result apply(Geometry g) throws RecordRejectedException {
    boolean repaired = false;
    boolean simplified = false;
    if (reprojector != null) {
      reprojector.reproject(g);
    }
    checkRange(g);
    boolean validate = config.validate() && !(g instanceof Point); // a finite point is always valid
    boolean topology =
        config.simplifyTolerance() > 0
            && config.simplifyMethod() == TransformConfig.SimplifyMethod.TOPOLOGY;
    if (!validate && !simplifies(g)) {
      return new Result(
          g, false,
          false); // points, and everything when validation and simplification are off: nothing
      // expensive to budget
    }
    long start = GeometryBudget.cpuNanos();
    budget.checkSize(g, GeometryCost.linework(g, topology));
    if (validate) {
      budget.checkTime(start, "validation");
      if (!IsValidOp.isValid(g)) {
        if (!config.repair()) {
          throw new RecordRejectedException(
              RejectReason.INVALID_GEOMETRY,
              "invalid " + g.getGeometryType() + ": " + new IsValidOp(g).getValidationError());
        }
        budget.checkRepair(g);
        budget.checkTime(start, "repair");
        Geometry fixed;
        try {
          fixed = GeometryFixer.fix(g);
        } catch (RuntimeException e) {
          throw new RecordRejectedException(
              RejectReason.UNREPAIRABLE_GEOMETRY, "GeometryFixer failed: " + e);
        }
        budget.checkTime(start, "validation of the repair");
        if (fixed.isEmpty() || !IsValidOp.isValid(fixed) || lostDimension(g, fixed)) {
          throw new RecordRejectedException(
              RejectReason.UNREPAIRABLE_GEOMETRY,
              "invalid "
                  + g.getGeometryType()
                  + " ("
                  + new IsValidOp(g).getValidationError()
                  + ") repairs to "
                  + (fixed.isEmpty() ? "an empty geometry" : fixed.getGeometryType()));
        }
        g = fixed;
        repaired = true;
      }
    }
    if (simplifies(g)) {
      if (topology) {
        budget.checkTopologySimplify(g);
      }
      budget.checkTime(start, "simplification");
      Geometry s =
          switch (config.simplifyMethod()) {
            case TOPOLOGY -> TopologyPreservingSimplifier.simplify(g, config.simplifyTolerance());
            case DOUGLAS_PEUCKER ->
                DouglasPeuckerSimplifier.simplify(g, config.simplifyTolerance());
          };
      if (!s
          .isEmpty()) { // a tolerance larger than the shape would erase it: keep the original then
        simplified = s.getNumPoints() < g.getNumPoints();
        g = s;
      }
    }
    return new Result(g, repaired, simplified);
  }

  private boolean simplifies(Geometry g) {
    return config.simplifyTolerance() > 0 && g.getNumPoints() > config.simplifyMinVertices();
  }

  /**
   * A polygon whose repair is only lines or points (a zero-area ring) has not been repaired but
   * destroyed.
   */
  private static boolean lostDimension(Geometry before, Geometry after) {
    return (before instanceof Polygonal
            && !(after instanceof Polygonal)
            && after.getDimension() < 2)
        || (before instanceof Lineal && after.getDimension() < 1);
  }

  static void checkRange(Geometry g) throws RecordRejectedException {
    double[] bad = new double[2];
    boolean[] found = new boolean[1];
    g.apply(
        new CoordinateSequenceFilter() {
          @Override
          public void filter(CoordinateSequence seq, int i) {
            double x = seq.getX(i);
            double y = seq.getY(i);
            if (x < -180 || x > 180 || y < -90 || y > 90) {
              bad[0] = x;
              bad[1] = y;
              found[0] = true;
            }
          }

          @Override
          public boolean isDone() {
            return found[0];
          }

          @Override
          public boolean isGeometryChanged() {
            return false;
          }
        });
    if (found[0]) {
      throw new RecordRejectedException(
          RejectReason.COORDINATES_OUT_OF_RANGE,
          "coordinate ("
              + bad[0]
              + ", "
              + bad[1]
              + ") is outside CRS84 (lon -180..180, lat -90..90)");
    }
  }

  /** proj4j transform from the declared EPSG code to EPSG:4326 (lon/lat, WGS84), in place. */
  static final class Reprojector {
    private final String from;
    private final CoordinateTransform transform;
    private final ProjCoordinate in = new ProjCoordinate();
    private final ProjCoordinate out = new ProjCoordinate();

    Reprojector(String epsg) {
      CRSFactory crs = new CRSFactory();
      this.from = epsg;
      this.transform =
          new CoordinateTransformFactory()
              .createTransform(crs.createFromName(epsg), crs.createFromName("EPSG:4326"));
    }

    void reproject(Geometry g) throws RecordRejectedException {
      String[] failure = new String[1];
      g.apply(
          new CoordinateSequenceFilter() {
            @Override
            public void filter(CoordinateSequence seq, int i) {
              in.x = seq.getX(i);
              in.y = seq.getY(i);
              try {
                transform.transform(in, out);
              } catch (RuntimeException e) {
                failure[0] = "(" + in.x + ", " + in.y + "): " + e.getMessage();
                return;
              }
              if (!Double.isFinite(out.x) || !Double.isFinite(out.y)) {
                failure[0] = "(" + in.x + ", " + in.y + ") maps to (" + out.x + ", " + out.y + ")";
                return;
              }
              seq.setOrdinate(i, 0, out.x);
              seq.setOrdinate(i, 1, out.y);
            }

            @Override
            public boolean isDone() {
              return failure[0] != null;
            }

            @Override
            public boolean isGeometryChanged() {
              return true;
            }
          });
      if (failure[0] != null) {
        throw new RecordRejectedException(
            RejectReason.REPROJECTION_FAILED, from + " to CRS84 failed at " + failure[0]);
      }
    }
  }
}
