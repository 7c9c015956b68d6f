package org.spatialingest.geometry;

import java.util.Locale;

/**
 * Why a record did not become a row. The lower-case name is the metric suffix and the rejects
 * reason code.
 */
public enum RejectReason {
  /**
   * Not JSON, or not a JSON object (or not a GeoJSON Feature for {@code input.format: feature}).
   */
  MALFORMED_JSON,
  /** {@code id} absent, null or blank. */
  MISSING_ID,
  /** {@code id} present but not a string (a Feature may also have a number id). */
  INVALID_ID,
  /** {@code event_time} absent or null. */
  MISSING_TIME,
  /** {@code event_time} neither ISO-8601 with an offset nor epoch millis. */
  INVALID_TIME,
  /** {@code geometry} absent or null. */
  MISSING_GEOMETRY,
  /** A GeoJSON type, WKT tag or WKB type code that is not a simple-features geometry. */
  UNKNOWN_GEOMETRY_TYPE,
  /**
   * WKT, WKB (hex/base64) or GeoJSON that does not parse, or a geometry of the wrong JSON type for
   * the format.
   */
  UNPARSEABLE_GEOMETRY,
  EMPTY_GEOMETRY,
  NON_FINITE_COORDINATES,
  /** Outside lon -180..180, lat -90..90 (after reprojection, if any). */
  COORDINATES_OUT_OF_RANGE,
  /** More vertices than {@code transform.max-vertices}. */
  TOO_MANY_VERTICES,
  /** More bytes than {@code transform.max-record-bytes}. */
  RECORD_TOO_LARGE,
  /** Invalid (IsValidOp) with {@code transform.repair: false}. */
  INVALID_GEOMETRY,
  /** Invalid, and GeometryFixer's result is empty or still invalid. */
  UNREPAIRABLE_GEOMETRY,
  /**
   * Validation, repair or simplification would exceed the per-record {@link GeometryBudget}: too
   * many vertices for them, too many edge pairs to test, too many crossings to repair, or the time
   * budget used up before a step.
   */
  GEOMETRY_TOO_COMPLEX,
  /** proj4j failed, or produced non-finite coordinates, for {@code transform.reproject-from}. */
  REPROJECTION_FAILED,
  /**
   * {@code properties} not an object, a typed property of the wrong JSON type, or an unusable
   * boundary refresh.
   */
  SCHEMA_MISMATCH;

  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
