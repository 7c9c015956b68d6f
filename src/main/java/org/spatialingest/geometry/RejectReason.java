package org.spatialingest.geometry;

import java.util.Locale;

/** Why a record did not become a row. The lower-case name is the metric suffix and the rejects reason code. */
public enum RejectReason {
  MALFORMED_JSON,
  MISSING_ID,
  INVALID_TIME,
  MISSING_GEOMETRY,
  UNKNOWN_GEOMETRY_TYPE,
  UNPARSEABLE_GEOMETRY,
  EMPTY_GEOMETRY,
  NON_FINITE_COORDINATES,
  COORDINATES_OUT_OF_RANGE,
  SCHEMA_MISMATCH;

  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
