package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.locationtech.jts.geom.Coordinate;
import org.spatialingest.config.InputConfig.InputFormat;

/**
 * Reads a record's top level into a {@link TelemetryRecord}, in this order of refusals: size cap
 * ({@code record_too_large}); exactly one JSON object, JSON whitespace around it allowed ({@code
 * malformed_json}); {@code properties} an object or null ({@code schema_mismatch}); for {@code
 * feature} a GeoJSON Feature; {@code id} ({@code missing_id}, {@code invalid_id}); {@code
 * event_time} ({@link EventTime}). The geometry is not read here.
 *
 * <p>Cost: the top level is streamed (cheaper than a whole tree): {@code id}, {@code event_time}
 * and {@code geometry} become small trees (a string a {@code TextNode} without a tree read; a
 * simple GeoJSON point no tree at all, see {@link GeoJsonGeometryReader#streamedPoint}; any other
 * GeoJSON object is tokenized twice, once to find it is not one), every other field is skipped, and
 * {@code properties} is copied as its original text when nothing needs to look inside it ({@code
 * keepRawProperties}). Not thread-safe: one per parser.
 */
final class RecordReader {
  private final ObjectMapper mapper;
  private final InputFormat format;
  private final long maxRecordBytes;
  private final boolean keepRawProperties;
  private final boolean streamPoints;

  /**
   * @param keepRawProperties true when no typed property, feature format or region enrichment needs
   *     to look inside {@code properties}: then it is kept as its original text
   */
  RecordReader(
      ObjectMapper mapper, InputFormat format, long maxRecordBytes, boolean keepRawProperties) {
    this.mapper = mapper;
    this.format = format;
    this.maxRecordBytes = maxRecordBytes;
    this.keepRawProperties = keepRawProperties;
    this.streamPoints = format == InputFormat.GEOJSON || format == InputFormat.FEATURE;
  }

  TelemetryRecord read(byte[] payload) throws RecordRejectedException {
    if (payload.length > maxRecordBytes) {
      throw new RecordRejectedException(
          RejectReason.RECORD_TOO_LARGE,
          "record is "
              + payload.length
              + " bytes, more than transform.max-record-bytes "
              + maxRecordBytes);
    }
    boolean feature = format == InputFormat.FEATURE;
    Fields f = fields(payload, feature);
    JsonNode props = f.properties;
    if (props != null && !props.isObject()) {
      throw new RecordRejectedException(
          RejectReason.SCHEMA_MISMATCH,
          "'properties' must be a JSON object, got " + props.getNodeType());
    }
    if (feature && !f.isFeature) {
      // a streamed point was an object: the hint needs no more of it
      JsonNode geometry = f.point != null ? JsonNodeFactory.instance.objectNode() : f.geometry;
      throw new RecordRejectedException(
          RejectReason.MALFORMED_JSON, FormatHint.forNonFeature(geometry));
    }
    String id = id(f.id, feature);
    JsonNode timeNode = feature ? (props == null ? null : props.get("event_time")) : f.eventTime;
    if (timeNode == null && f.isFeature && !feature) {
      throw new RecordRejectedException(RejectReason.MISSING_TIME, FormatHint.forFeature(format));
    }
    long eventMillis = EventTime.millis(timeNode);
    return new TelemetryRecord(
        id, eventMillis, f.geometry, f.point, (ObjectNode) props, f.rawProperties);
  }

  /**
   * The value at {@code p}: a string without the cost of a tree read (the same {@code TextNode}),
   * anything else as its tree.
   */
  private JsonNode node(JsonParser p) throws IOException {
    return p.currentToken() == JsonToken.VALUE_STRING
        ? TextNode.valueOf(p.getText())
        : mapper.readTree(p);
  }

  /** The top-level fields of a record; the others are skipped. */
  private static final class Fields {
    JsonNode id;
    JsonNode eventTime;
    JsonNode geometry;

    /**
     * The geometry when it is a simple GeoJSON point, read without a tree (then {@code geometry} is
     * null).
     */
    Coordinate point;

    JsonNode properties;
    String rawProperties;
    boolean isFeature;
  }

  private Fields fields(byte[] payload, boolean feature) throws RecordRejectedException {
    Fields f = new Fields();
    boolean rawProps = keepRawProperties && !feature;
    try (JsonParser p = mapper.getFactory().createParser(payload)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new RecordRejectedException(
            RejectReason.MALFORMED_JSON, "record must be a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        switch (name) {
          case "id" -> f.id = node(p);
          case "event_time" -> f.eventTime = node(p);
          case "geometry" -> {
            f.point = null;
            if (streamPoints && value == JsonToken.START_OBJECT) {
              int start = (int) p.currentTokenLocation().getByteOffset();
              f.point = GeoJsonGeometryReader.streamedPoint(p);
              int end = (int) p.currentLocation().getByteOffset();
              // not a simple point: its tree, from the object's bytes (the parser has just checked
              // them)
              f.geometry = f.point != null ? null : mapper.readTree(payload, start, end - start);
            } else {
              f.geometry = node(p);
            }
          }
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
        throw new RecordRejectedException(
            RejectReason.MALFORMED_JSON, "unexpected end of the record");
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
   * True if nothing but JSON whitespace follows the root value. Jackson reads several root values
   * in a row, so the next token is a second value ({@code {..}{..}}), an error (trailing text) or,
   * at the end, null; asking costs no allocation on the good path.
   */
  private static boolean atEnd(JsonParser p) {
    try {
      return p.nextToken() == null;
    } catch (IOException e) { // not JSON after the value
      return false;
    }
  }

  /**
   * What follows the record's JSON object, where (error path only: parses the object again to find
   * its end).
   */
  private String trailingContent(byte[] payload) {
    int end = 0;
    try (JsonParser p = mapper.getFactory().createParser(payload)) {
      p.nextToken();
      p.skipChildren();
      end = (int) p.currentLocation().getByteOffset();
    } catch (IOException e) {
      // cannot happen: the object parsed a moment ago
    }
    while (end < payload.length
        && (payload[end] == ' '
            || payload[end] == '\t'
            || payload[end] == '\n'
            || payload[end] == '\r')) {
      end++;
    }
    String rest =
        new String(payload, end, Math.min(payload.length - end, 24), StandardCharsets.UTF_8);
    StringBuilder shown = new StringBuilder();
    int i = 0;
    for (; i < rest.length() && i < 20; i++) {
      char c = rest.charAt(i);
      shown.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    boolean more = i < rest.length() || payload.length - end > 24;
    return "trailing content after the JSON object at byte "
        + end
        + ": '"
        + shown
        + (more ? "...'" : "'")
        + " (a record is one JSON value)";
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
    throw new RecordRejectedException(
        RejectReason.INVALID_ID,
        "'id' must be a string"
            + (feature ? " or an integer" : "")
            + ", got "
            + node.getNodeType());
  }

  private static String firstLine(Exception e) {
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}
