package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.CoordinateSequence;
import org.locationtech.jts.geom.CoordinateSequenceFilter;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygonal;
import org.locationtech.jts.io.ParseException;
import org.locationtech.jts.io.WKBWriter;
import org.locationtech.jts.io.WKTReader;
import org.spatialingest.table.TelemetryTable;
import org.spatialingest.config.InputConfig;
import org.spatialingest.config.InputConfig.InputFormat;
import org.spatialingest.config.InputConfig.TypedProperty;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.RegionsConfig;
import org.spatialingest.config.TransformConfig;

/**
 * Turns one telemetry record into a table row, or says why it cannot (a {@link RecordRejectedException} with a
 * {@link RejectReason}). The whole transform chain, in order: size cap; parse the record (Jackson) and the geometry
 * per {@code input.format} (GeoJSON tree → JTS, WKT, WKB hex/base64 with a hand-written 2D-point fast path); vertex
 * cap; emptiness and finiteness; {@link GeometryChain} (reproject, range, validate/repair, simplify); bbox, Hilbert
 * key and 2D WKB (points written by hand).
 *
 * <p>Record contract: exactly one JSON object (JSON whitespace around it is fine, anything else after it is
 * {@code malformed_json}) with {@code id} (non-empty string), {@code event_time} (ISO-8601 with offset, or epoch
 * millis, within {@link EventTime#RANGE}), {@code geometry} (encoded per {@code input.format}; another encoding is
 * rejected with the format that would read it, see {@link FormatHint}) and an optional {@code properties} object; for
 * {@code feature} a GeoJSON Feature with {@code id} (string or number) and {@code properties.event_time}. Geometry
 * work is bounded per record by {@link GeometryBudget}. Not thread-safe: one per operator.
 */
public final class TelemetryParser {
  private final ObjectMapper mapper = new ObjectMapper();
  private final GeometryFactory factory = new GeometryFactory();
  private final GeoJsonGeometryReader geoJson = new GeoJsonGeometryReader(factory);
  private final WKTReader wkt = new WKTReader(factory);
  private final Wkb wkb = new Wkb(factory);
  private final WKBWriter wkb2d = new WKBWriter(2);
  private final HilbertCurve hilbert;
  private final InputFormat format;
  private final List<TypedProperty> typed;
  private final TransformConfig transform;
  private final RegionsConfig regions;
  private final GeometryChain chain;
  private final int fieldCount;

  // what the last successful parse found, for the transform's counters and the region side output
  private Geometry lastGeometry;
  private String lastRefreshRegion;
  private long lastEventMillis;

  /** The defaults of every key: GeoJSON (or WKT) input, validate and repair on, no reprojection or simplification. */
  public TelemetryParser(HilbertCurve hilbert) {
    this(hilbert, JobConfig.defaults());
  }

  public TelemetryParser(HilbertCurve hilbert, JobConfig config) {
    this(hilbert, config.input(), config.transform(), config.regions());
  }

  public TelemetryParser(HilbertCurve hilbert, InputConfig input, TransformConfig transform, RegionsConfig regions) {
    this.hilbert = hilbert;
    this.format = input.format();
    this.typed = input.typedProperties();
    this.transform = transform;
    this.regions = regions;
    this.chain = new GeometryChain(transform);
    this.fieldCount = TelemetryTable.FIELD_COUNT + typed.size();
  }

  /** The row for {@code payload}, with {@code ingestMillis} (the Kafka timestamp) as ingest time. */
  public GenericRowData parse(byte[] payload, long ingestMillis) throws RecordRejectedException {
    lastGeometry = null;
    lastRefreshRegion = null;
    if (payload.length > transform.maxRecordBytes()) {
      throw new RecordRejectedException(RejectReason.RECORD_TOO_LARGE,
          "record is " + payload.length + " bytes, more than transform.max-record-bytes " + transform.maxRecordBytes());
    }
    boolean feature = format == InputFormat.FEATURE;
    Fields f = readFields(payload, feature);
    JsonNode props = f.properties;
    if (props != null && !props.isNull() && !props.isObject()) {
      throw new RecordRejectedException(RejectReason.SCHEMA_MISMATCH,
          "'properties' must be a JSON object, got " + props.getNodeType());
    }
    if (feature && !f.isFeature) {
      throw new RecordRejectedException(RejectReason.MALFORMED_JSON, FormatHint.forNonFeature(f.geometry));
    }
    String id = id(f.id, feature);
    JsonNode timeNode = feature ? (props == null ? null : props.get("event_time")) : f.eventTime;
    if (timeNode == null && f.isFeature && !feature) {
      throw new RecordRejectedException(RejectReason.MISSING_TIME, FormatHint.forFeature(format));
    }
    long eventMillis = EventTime.millis(timeNode);
    Geometry geometry = geometry(f.geometry);
    geometry = chain.apply(geometry);

    GenericRowData row = new GenericRowData(fieldCount);
    Object[] typedValues = typed.isEmpty() ? null : typedValues(props);
    String refresh = refreshRegion(props, geometry);
    String properties = f.rawProperties;
    if (props != null && !props.isNull()) {
      if (feature || typedValues != null) {
        ObjectNode rest = (ObjectNode) props;
        if (feature) {
          rest.remove("event_time");
        }
        for (TypedProperty p : typed) {
          rest.remove(p.name());
        }
      }
      properties = json(props);
    }

    Envelope env = geometry.getEnvelopeInternal();
    row.setField(TelemetryTable.ID, StringData.fromString(id));
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
    if (typedValues != null) {
      for (int i = 0; i < typedValues.length; i++) {
        row.setField(TelemetryTable.FIELD_COUNT + i, typedValues[i]);
      }
    }
    lastGeometry = geometry;
    lastRefreshRegion = refresh;
    lastEventMillis = eventMillis;
    return row;
  }

  /** The top-level fields of a record; the others are skipped. */
  private static final class Fields {
    JsonNode id;
    JsonNode eventTime;
    JsonNode geometry;
    JsonNode properties;
    /** The properties object's original text, when it is kept as is (no typed columns, feature or regions). */
    String rawProperties;
    boolean isFeature;
  }

  /**
   * Streams the record's top level (cheaper than a whole tree): scalars and the geometry become small trees, the
   * properties object is copied as its original text when nothing needs to look inside it.
   */
  private Fields readFields(byte[] payload, boolean feature) throws RecordRejectedException {
    Fields f = new Fields();
    boolean rawProps = typed.isEmpty() && !feature && !regions.enabled();
    try (JsonParser p = mapper.getFactory().createParser(payload)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new RecordRejectedException(RejectReason.MALFORMED_JSON, "record must be a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        switch (name) {
          case "id" -> f.id = mapper.readTree(p);
          case "event_time" -> f.eventTime = mapper.readTree(p);
          case "geometry" -> f.geometry = mapper.readTree(p);
          case "type" -> {
            f.isFeature = value == JsonToken.VALUE_STRING && "Feature".equals(p.getText());
            p.skipChildren();
          }
          case "properties" -> {
            if (rawProps && value == JsonToken.START_OBJECT) {
              int start = (int) p.currentTokenLocation().getByteOffset();
              p.skipChildren();
              int end = (int) p.currentLocation().getByteOffset();
              f.rawProperties = new String(payload, start, end - start, StandardCharsets.UTF_8);
              f.properties = null;
            } else {
              f.rawProperties = null;
              f.properties = mapper.readTree(p);
            }
          }
          default -> p.skipChildren();
        }
      }
      if (p.currentToken() != JsonToken.END_OBJECT) {
        throw new RecordRejectedException(RejectReason.MALFORMED_JSON, "unexpected end of the record");
      }
      if (!atEnd(p)) {
        throw new RecordRejectedException(RejectReason.MALFORMED_JSON, trailingContent(payload));
      }
    } catch (IOException e) {
      throw new RecordRejectedException(RejectReason.MALFORMED_JSON, firstLine(e));
    }
    if (f.properties != null && f.properties.isNull()) {
      f.properties = null;
    }
    return f;
  }

  /**
   * True if nothing but JSON whitespace follows the root value. Jackson reads several root values in a row, so the
   * next token is a second value ({@code {..}{..}}), an error (trailing text) or, at the end, null; asking costs no
   * allocation on the good path.
   */
  private static boolean atEnd(JsonParser p) {
    try {
      return p.nextToken() == null;
    } catch (IOException e) { // not JSON after the value
      return false;
    }
  }

  /** What follows the record's JSON object, where (error path only: parses the object again to find its end). */
  private String trailingContent(byte[] payload) {
    int end = 0;
    try (JsonParser p = mapper.getFactory().createParser(payload)) {
      p.nextToken();
      p.skipChildren();
      end = (int) p.currentLocation().getByteOffset();
    } catch (IOException e) {
      // cannot happen: the object parsed a moment ago
    }
    while (end < payload.length && (payload[end] == ' ' || payload[end] == '\t' || payload[end] == '\n'
        || payload[end] == '\r')) {
      end++;
    }
    String rest = new String(payload, end, Math.min(payload.length - end, 24), StandardCharsets.UTF_8);
    StringBuilder shown = new StringBuilder();
    int i = 0;
    for (; i < rest.length() && i < 20; i++) {
      char c = rest.charAt(i);
      shown.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    boolean more = i < rest.length() || payload.length - end > 24;
    return "trailing content after the JSON object at byte " + end + ": '" + shown + (more ? "...'" : "'")
        + " (a record is one JSON value)";
  }

  /** The geometry of the last row {@link #parse} returned (after the chain). */
  public Geometry lastGeometry() {
    return lastGeometry;
  }

  /** The region the last row refreshes ({@code regions.refresh-kind}), or null. */
  public String lastRefreshRegion() {
    return lastRefreshRegion;
  }

  public long lastEventMillis() {
    return lastEventMillis;
  }

  public boolean lastRepaired() {
    return lastGeometry != null && chain.repaired;
  }

  public boolean lastSimplified() {
    return lastGeometry != null && chain.simplified;
  }

  private static String id(JsonNode node, boolean feature) throws RecordRejectedException {
    if (node == null || node.isNull() || (node.isTextual() && node.asText().isBlank())) {
      throw new RecordRejectedException(RejectReason.MISSING_ID, "'id' must be a non-empty string");
    }
    if (node.isTextual()) {
      return node.asText();
    }
    if (feature && node.isIntegralNumber()) {
      return node.asText();
    }
    throw new RecordRejectedException(RejectReason.INVALID_ID, "'id' must be a string"
        + (feature ? " or an integer" : "") + ", got " + node.getNodeType());
  }

  private Geometry geometry(JsonNode node) throws RecordRejectedException {
    if (node == null || node.isNull()) {
      throw new RecordRejectedException(RejectReason.MISSING_GEOMETRY, "'geometry' is missing");
    }
    Geometry g;
    try {
      g = switch (format) {
        case GEOJSON -> node.isTextual() ? wkt(node.asText()) : geoJson(node);
        case FEATURE -> geoJson(node);
        case WKT -> wkt(text(node));
        case WKB_HEX -> {
          byte[] bytes = Wkb.fromHex(text(node));
          if (bytes == null) {
            throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "WKB: not an even-length hex string");
          }
          yield wkb.read(bytes);
        }
        case WKB_BASE64 -> {
          byte[] bytes;
          try {
            bytes = Base64.getDecoder().decode(text(node));
          } catch (IllegalArgumentException e) {
            throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "WKB: " + e.getMessage());
          }
          yield wkb.read(bytes);
        }
      };
    } catch (RecordRejectedException e) {
      String hint = node.isTextual() ? FormatHint.forText(node.asText(), format) : null;
      throw hint == null ? e : new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, hint);
    }
    int vertices = g.getNumPoints();
    if (vertices > transform.maxVertices()) {
      throw new RecordRejectedException(RejectReason.TOO_MANY_VERTICES,
          g.getGeometryType() + " has " + vertices + " vertices, more than transform.max-vertices "
              + transform.maxVertices());
    }
    if (g.isEmpty()) {
      throw new RecordRejectedException(RejectReason.EMPTY_GEOMETRY, g.getGeometryType() + " is empty");
    }
    if (!finite(g)) {
      throw new RecordRejectedException(RejectReason.NON_FINITE_COORDINATES, "geometry has NaN or infinite ordinates");
    }
    return g;
  }

  private Geometry geoJson(JsonNode node) throws RecordRejectedException {
    try {
      return geoJson.read(node);
    } catch (IllegalArgumentException e) { // JTS constructors: e.g. a LineString of one position
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON: " + e.getMessage());
    }
  }

  /** The geometry string of a WKT or WKB format; anything else is refused with what it is and what would read it. */
  private String text(JsonNode node) throws RecordRejectedException {
    if (!node.isTextual()) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, FormatHint.forNode(node, format));
    }
    return node.asText();
  }

  private Geometry wkt(String text) throws RecordRejectedException {
    try {
      return wkt.read(text);
    } catch (ParseException e) {
      String m = String.valueOf(e.getMessage());
      RejectReason reason = m.startsWith("Unknown geometry type") ? RejectReason.UNKNOWN_GEOMETRY_TYPE
          : RejectReason.UNPARSEABLE_GEOMETRY;
      throw new RecordRejectedException(reason, "WKT: " + m);
    } catch (RuntimeException e) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "WKT: " + e.getMessage());
    }
  }

  private static boolean finite(Geometry g) {
    if (g instanceof Point p) {
      Coordinate c = p.getCoordinate();
      return Double.isFinite(c.x) && Double.isFinite(c.y);
    }
    boolean[] ok = {true};
    g.apply(new CoordinateSequenceFilter() {
      @Override
      public void filter(CoordinateSequence seq, int i) {
        if (!Double.isFinite(seq.getX(i)) || !Double.isFinite(seq.getY(i))) {
          ok[0] = false;
        }
      }

      @Override
      public boolean isDone() {
        return !ok[0];
      }

      @Override
      public boolean isGeometryChanged() {
        return false;
      }
    });
    return ok[0];
  }

  private Object[] typedValues(JsonNode props) throws RecordRejectedException {
    Object[] out = new Object[typed.size()];
    if (props == null || props.isNull()) {
      return out;
    }
    for (int i = 0; i < out.length; i++) {
      TypedProperty p = typed.get(i);
      JsonNode v = props.get(p.name());
      if (v == null || v.isNull()) {
        continue;
      }
      out[i] = switch (p.type()) {
        case STRING -> v.isTextual() ? StringData.fromString(v.asText()) : null;
        case LONG -> v.isIntegralNumber() && v.canConvertToLong() ? (Object) v.asLong() : null;
        case DOUBLE -> v.isNumber() ? (Object) v.asDouble() : null;
        case BOOLEAN -> v.isBoolean() ? (Object) v.asBoolean() : null;
      };
      if (out[i] == null) {
        throw new RecordRejectedException(RejectReason.SCHEMA_MISMATCH, "property '" + p.name() + "' must be "
            + p.type().name().toLowerCase(java.util.Locale.ROOT) + ", got " + v.getNodeType());
      }
    }
    return out;
  }

  private String refreshRegion(JsonNode props, Geometry g) throws RecordRejectedException {
    if (!regions.enabled() || props == null || !regions.refreshKind().equals(props.path("kind").asText(null))) {
      return null;
    }
    JsonNode name = props.get(regions.nameProperty());
    if (name == null || !name.isTextual() || name.asText().isBlank()) {
      throw new RecordRejectedException(RejectReason.SCHEMA_MISMATCH,
          "boundary refresh needs a non-empty string property '" + regions.nameProperty() + "'");
    }
    if (!(g instanceof Polygonal)) {
      throw new RecordRejectedException(RejectReason.SCHEMA_MISMATCH,
          "boundary refresh of '" + name.asText() + "' must be a Polygon or MultiPolygon, got " + g.getGeometryType());
    }
    return name.asText();
  }

  private String json(JsonNode node) throws RecordRejectedException {
    try {
      return mapper.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new RecordRejectedException(RejectReason.SCHEMA_MISMATCH, e.getOriginalMessage());
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
}
