package org.spatialingest.config;

import java.io.Serializable;
import java.util.Locale;
import org.locationtech.proj4j.CRSFactory;

/**
 * The transform chain's switches, applied in this order: parse (caps on record bytes and vertices),
 * reproject from {@code reprojectFrom} to CRS84, validate and repair only invalid geometries,
 * simplify above a vertex count.
 *
 * @param reprojectFrom EPSG code ({@code EPSG:3857}) of the input coordinates, or null when they
 *     are CRS84 already
 * @param simplifyTolerance 0 = no simplification; in the units of the output CRS (degrees)
 */
public record TransformConfig(
    String reprojectFrom,
    boolean validate,
    boolean repair,
    double simplifyTolerance,
    int simplifyMinVertices,
    SimplifyMethod simplifyMethod,
    int maxVertices,
    long maxRecordBytes,
    Budget budget)
    implements Serializable {

  /**
   * What validation, repair and simplification may spend on one record ({@code
   * transform.budget-*}); over budget is {@code geometry_too_complex}. See {@code
   * geometry/GeometryBudget} for what each count predicts.
   */
  public record Budget(
      int vertices, long pairTests, int repairSize, long repairPairTests, long millis)
      implements Serializable {}

  /**
   * {@code topology}: TopologyPreservingSimplifier (stays valid); {@code douglas-peucker}: faster,
   * may need repair.
   */
  public enum SimplifyMethod {
    TOPOLOGY,
    DOUGLAS_PEUCKER
  }

  public static TransformConfig defaults() {
    return JobConfig.defaults().transform();
  }

  /** Normalizes {@code 3857} or {@code epsg:3857} to {@code EPSG:3857}; empty stays null. */
  static String parseEpsg(String value) {
    if (value.isEmpty()) {
      return null;
    }
    String code = value.toUpperCase(Locale.ROOT).startsWith("EPSG:") ? value.substring(5) : value;
    if (!code.matches("[0-9]{4,6}")) {
      throw new IllegalArgumentException("not an EPSG code");
    }
    String name = "EPSG:" + code;
    try {
      new CRSFactory().createFromName(name);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("proj4j-epsg does not know " + name);
    }
    return name;
  }
}
