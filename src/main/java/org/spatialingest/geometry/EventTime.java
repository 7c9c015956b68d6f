package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * A record's {@code event_time} → epoch milliseconds, refusing ({@code invalid_time}) anything
 * outside {@value #RANGE}.
 *
 * <p>Why that range: the sink stores {@code event_time} as Iceberg {@code timestamptz}
 * (microseconds in a long) via Flink's {@code TimestampData} (millis × 1000 + micros, unchecked)
 * and partitions by {@code day}/{@code hour} of it. Millis beyond ±9,223,372,036,854,775 (about
 * ±292,000 years) wrap around in that multiplication (1e18 ms became a partition in year 124789),
 * and the hour transform's int overflows from about ±245,000 years; in between the bytes are right
 * but readers are not: Spark's TimestampType is documented for 0001-01-01..9999-12-31, Python's
 * datetime (PyIceberg, pyarrow to Python) stops at years 1 and 9999, and Iceberg writes such
 * partitions without the sign an ISO-8601 year beyond 9999 needs ({@code 10000-01-01}). So: years
 * 0001..9999, UTC, at millisecond precision (finer digits are truncated, as before).
 *
 * <p>Cost: epoch millis and {@code yyyy-MM-ddTHH:mm:ss[.f]Z} (via {@link IsoTime}) allocate nothing
 * beyond the node's text; other offsets go through {@code java.time}.
 */
final class EventTime {
  /** 0001-01-01T00:00:00Z. */
  static final long MIN_MILLIS = -62_135_596_800_000L;

  /** 9999-12-31T23:59:59.999Z. */
  static final long MAX_MILLIS = 253_402_300_799_999L;

  static final String RANGE = "0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z";
  private static final Instant MIN = Instant.ofEpochMilli(MIN_MILLIS);
  private static final Instant MAX = Instant.ofEpochMilli(MAX_MILLIS + 1).minusNanos(1);

  private EventTime() {}

  /**
   * Epoch millis of {@code node}: an integral number (epoch millis) or an ISO-8601 string with an
   * offset.
   */
  static long millis(JsonNode node) throws RecordRejectedException {
    if (node == null || node.isNull()) {
      throw new RecordRejectedException(RejectReason.MISSING_TIME, "'event_time' is missing");
    }
    if (node.isIntegralNumber()) {
      if (node.canConvertToLong()) {
        long millis = node.asLong();
        if (millis >= MIN_MILLIS && millis <= MAX_MILLIS) {
          return millis;
        }
      }
      throw outOfRange(node.asText() + " (epoch millis)");
    }
    if (node.isTextual()) {
      String text = node.asText();
      long fast = IsoTime.utcMillis(text);
      if (fast != IsoTime.NOT_SIMPLE) {
        if (fast >= MIN_MILLIS && fast <= MAX_MILLIS) {
          return fast;
        }
        throw outOfRange("'" + text + "'");
      }
      Instant t = parse(text);
      if (t.isBefore(MIN) || t.isAfter(MAX)) {
        throw outOfRange("'" + GeoJsonGeometryReader.abbreviate(text) + "'");
      }
      return t.toEpochMilli();
    }
    throw new RecordRejectedException(
        RejectReason.INVALID_TIME,
        "'event_time' must be an ISO-8601 string or epoch millis, got " + node.getNodeType());
  }

  private static Instant parse(String text) throws RecordRejectedException {
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      try {
        return OffsetDateTime.parse(text).toInstant();
      } catch (DateTimeParseException e2) {
        throw new RecordRejectedException(
            RejectReason.INVALID_TIME,
            "'event_time' '"
                + GeoJsonGeometryReader.abbreviate(text)
                + "' is not ISO-8601 with an offset");
      }
    }
  }

  private static RecordRejectedException outOfRange(String value) {
    return new RecordRejectedException(
        RejectReason.INVALID_TIME,
        "'event_time' "
            + value
            + " is outside "
            + RANGE
            + " (epoch millis "
            + MIN_MILLIS
            + ".."
            + MAX_MILLIS
            + "), the range the table's timestamps hold");
  }
}
