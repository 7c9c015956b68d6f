package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.CoordinateFilter;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.io.ParseException;
import org.locationtech.jts.io.WKBWriter;
import org.locationtech.jts.io.WKTReader;
import org.spatialingest.TelemetryTable;

/**
 * Turns one JSON telemetry record into a table row, or says why it cannot.
 *
 * <p>Record contract: {@code id} (non-empty string), {@code event_time} (ISO-8601 with offset, or epoch millis),
 * {@code geometry} (GeoJSON geometry object or WKT string, CRS84: x = longitude, y = latitude) and an optional
 * {@code properties} object. The Kafka timestamp becomes {@code ingest_time}. Not thread-safe: one per operator.
 */
public final class TelemetryParser {
  private final ObjectMapper mapper = new ObjectMapper();
  private final GeometryFactory factory = new GeometryFactory();
  private final GeoJsonGeometryReader geoJson = new GeoJsonGeometryReader(factory);
  private final WKTReader wkt = new WKTReader(factory);
  private final WKBWriter wkb2d = new WKBWriter(2);
  private final HilbertCurve hilbert;

  public TelemetryParser(HilbertCurve hilbert) {
    this.hilbert = hilbert;
  }

  /** The row for {@code payload}, with {@code ingestMillis} (the Kafka timestamp) as ingest time. */
  public GenericRowData parse(byte[] payload, long ingestMillis) throws GeometryParseException {
    JsonNode root;
    try {
      root = mapper.readTree(payload);
    } catch (IOException e) {
      throw new GeometryParseException(RejectReason.MALFORMED_JSON, firstLine(e));
    }
    if (root == null || !root.isObject()) {
      throw new GeometryParseException(RejectReason.MALFORMED_JSON, "record must be a JSON object");
    }
    JsonNode idNode = root.get("id");
    if (idNode == null || !idNode.isTextual() || idNode.asText().isBlank()) {
      throw new GeometryParseException(RejectReason.MISSING_ID, "'id' must be a non-empty string");
    }
    long eventMillis = eventTime(root.get("event_time"));
    Geometry geometry = geometry(root.get("geometry"));
    checkCoordinates(geometry);
    String properties = properties(root.get("properties"));

    Envelope env = geometry.getEnvelopeInternal();
    GenericRowData row = new GenericRowData(TelemetryTable.FIELD_COUNT);
    row.setField(TelemetryTable.ID, StringData.fromString(idNode.asText()));
    row.setField(TelemetryTable.EVENT_TIME, TimestampData.fromEpochMillis(eventMillis));
    row.setField(TelemetryTable.INGEST_TIME, TimestampData.fromEpochMillis(ingestMillis));
    row.setField(TelemetryTable.GEOMETRY, geometry instanceof Point p ? pointWkb(p) : wkb2d.write(geometry));
    row.setField(TelemetryTable.GEOMETRY_TYPE, StringData.fromString(geometry.getGeometryType()));
    row.setField(TelemetryTable.XMIN, env.getMinX());
    row.setField(TelemetryTable.YMIN, env.getMinY());
    row.setField(TelemetryTable.XMAX, env.getMaxX());
    row.setField(TelemetryTable.YMAX, env.getMaxY());
    row.setField(TelemetryTable.HILBERT, hilbert.key((env.getMinX() + env.getMaxX()) / 2,
        (env.getMinY() + env.getMaxY()) / 2));
    row.setField(TelemetryTable.PROPERTIES, properties == null ? null : StringData.fromString(properties));
    return row;
  }

  private static long eventTime(JsonNode node) throws GeometryParseException {
    if (node == null || node.isNull()) {
      throw new GeometryParseException(RejectReason.INVALID_TIME, "'event_time' is missing");
    }
    if (node.isIntegralNumber()) {
      return node.asLong();
    }
    if (node.isTextual()) {
      String text = node.asText();
      try {
        return Instant.parse(text).toEpochMilli();
      } catch (DateTimeParseException e) {
        try {
          return OffsetDateTime.parse(text).toInstant().toEpochMilli();
        } catch (DateTimeParseException e2) {
          throw new GeometryParseException(RejectReason.INVALID_TIME,
              "'event_time' '" + GeoJsonGeometryReader.abbreviate(text) + "' is not ISO-8601 with an offset");
        }
      }
    }
    throw new GeometryParseException(RejectReason.INVALID_TIME,
        "'event_time' must be an ISO-8601 string or epoch millis, got " + node.getNodeType());
  }

  private Geometry geometry(JsonNode node) throws GeometryParseException {
    if (node == null || node.isNull()) {
      throw new GeometryParseException(RejectReason.MISSING_GEOMETRY, "'geometry' is missing");
    }
    Geometry g;
    if (node.isTextual()) {
      try {
        g = wkt.read(node.asText());
      } catch (ParseException | IllegalArgumentException e) {
        throw new GeometryParseException(RejectReason.UNPARSEABLE_GEOMETRY, "WKT: " + e.getMessage());
      }
    } else {
      g = geoJson.read(node);
    }
    if (g.isEmpty()) {
      throw new GeometryParseException(RejectReason.EMPTY_GEOMETRY, g.getGeometryType() + " is empty");
    }
    return g;
  }

  private static void checkCoordinates(Geometry g) throws GeometryParseException {
    CoordinateCheck check = new CoordinateCheck();
    g.apply(check);
    if (check.nonFinite) {
      throw new GeometryParseException(RejectReason.NON_FINITE_COORDINATES, "geometry has NaN or infinite ordinates");
    }
    if (check.outOfRange != null) {
      throw new GeometryParseException(RejectReason.COORDINATES_OUT_OF_RANGE,
          "coordinate " + check.outOfRange + " is outside CRS84 (lon -180..180, lat -90..90)");
    }
  }

  private String properties(JsonNode node) throws GeometryParseException {
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isObject()) {
      throw new GeometryParseException(RejectReason.SCHEMA_MISMATCH,
          "'properties' must be a JSON object, got " + node.getNodeType());
    }
    try {
      return mapper.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new GeometryParseException(RejectReason.SCHEMA_MISMATCH, e.getOriginalMessage());
    }
  }

  /** Little-endian 2D WKB of a point, written directly: the general writer costs several times more for points. */
  static byte[] pointWkb(Point p) {
    byte[] out = new byte[21];
    out[0] = 1; // little endian
    out[1] = 1; // type 1 = Point
    long x = Double.doubleToLongBits(p.getX());
    long y = Double.doubleToLongBits(p.getY());
    for (int i = 0; i < 8; i++) {
      out[5 + i] = (byte) (x >>> (8 * i));
      out[13 + i] = (byte) (y >>> (8 * i));
    }
    return out;
  }

  private static String firstLine(Exception e) {
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  private static final class CoordinateCheck implements CoordinateFilter {
    boolean nonFinite;
    Coordinate outOfRange;

    @Override
    public void filter(Coordinate c) {
      if (!Double.isFinite(c.x) || !Double.isFinite(c.y)) {
        nonFinite = true;
      } else if (outOfRange == null && (c.x < -180 || c.x > 180 || c.y < -90 || c.y > 90)) {
        outOfRange = c;
      }
    }
  }
}
