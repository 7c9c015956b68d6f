package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygonal;
import org.locationtech.jts.io.WKBWriter;
import org.spatialingest.config.InputConfig.TypedProperty;
import org.spatialingest.config.RegionsConfig;
import org.spatialingest.table.TelemetryTable;

/**
 * A record and its final geometry to a telemetry-table row: typed property columns ({@code
 * input.typed-properties}; a value of the wrong JSON type is {@code schema_mismatch}), the boundary
 * refresh it carries ({@code regions.refresh-kind}; it must name a region and be polygonal), the
 * {@code properties} text without the promoted ones (and a feature's {@code event_time}), bbox,
 * Hilbert key of the bbox centre and 2D WKB (points written by hand: the general writer costs
 * several times more for points). Not thread-safe: one per parser.
 */
final class RowAssembler {
  private final ObjectMapper mapper;
  private final HilbertCurve hilbert;
  private final List<TypedProperty> typed;
  private final boolean feature;
  private final RegionsConfig regions;
  private final int fieldCount;
  private final WKBWriter wkb2d = new WKBWriter(2);

  /** One value for every point row (rows share it as they share a source key; encoded once). */
  private final StringData pointType = StringData.fromString("Point");

  RowAssembler(
      ObjectMapper mapper,
      HilbertCurve hilbert,
      List<TypedProperty> typed,
      boolean feature,
      RegionsConfig regions) {
    this.mapper = mapper;
    this.hilbert = hilbert;
    this.typed = typed;
    this.feature = feature;
    this.regions = regions;
    this.fieldCount = TelemetryTable.FIELD_COUNT + typed.size();
    pointType.hashCode(); // encodes once; later rows share the bytes
  }

  ParsedRow assemble(TelemetryRecord record, GeometryChain.Result chained, long ingestMillis)
      throws RecordRejectedException {
    Geometry geometry = chained.geometry();
    ObjectNode props = record.properties();
    Object[] typedValues = typed.isEmpty() ? null : typedValues(props);
    String refresh = refreshRegion(props, geometry);
    StringData properties =
        record.rawProperties() == null ? null : StringData.fromString(record.rawProperties());
    if (props != null) {
      if (feature) {
        props.remove("event_time");
      }
      for (TypedProperty p : typed) {
        props.remove(p.name());
      }
      properties = StringData.fromString(json(props));
    }

    GenericRowData row = new GenericRowData(fieldCount);
    row.setField(TelemetryTable.ID, StringData.fromString(record.id()));
    row.setField(TelemetryTable.EVENT_TIME, TimestampData.fromEpochMillis(record.eventMillis()));
    row.setField(TelemetryTable.INGEST_TIME, TimestampData.fromEpochMillis(ingestMillis));
    if (geometry instanceof Point p) { // its own bbox: one box per ordinate, no envelope
      Double x = p.getX();
      Double y = p.getY();
      row.setField(TelemetryTable.GEOMETRY, pointWkb(p));
      row.setField(TelemetryTable.GEOMETRY_TYPE, pointType);
      row.setField(TelemetryTable.BBOX, GenericRowData.of(x, y, x, y));
      row.setField(TelemetryTable.HILBERT, hilbert.key(x, y));
    } else {
      Envelope env = geometry.getEnvelopeInternal();
      row.setField(TelemetryTable.GEOMETRY, wkb2d.write(geometry));
      row.setField(TelemetryTable.GEOMETRY_TYPE, StringData.fromString(geometry.getGeometryType()));
      row.setField(
          TelemetryTable.BBOX,
          GenericRowData.of(env.getMinX(), env.getMinY(), env.getMaxX(), env.getMaxY()));
      row.setField(
          TelemetryTable.HILBERT,
          hilbert.key((env.getMinX() + env.getMaxX()) / 2, (env.getMinY() + env.getMaxY()) / 2));
    }
    row.setField(TelemetryTable.PROPERTIES, properties);
    if (typedValues != null) {
      for (int i = 0; i < typedValues.length; i++) {
        row.setField(TelemetryTable.FIELD_COUNT + i, typedValues[i]);
      }
    }
    return new ParsedRow(
        row, record.eventMillis(), refresh, chained.repaired(), chained.simplified());
  }

  private Object[] typedValues(JsonNode props) throws RecordRejectedException {
    Object[] out = new Object[typed.size()];
    if (props == null) {
      return out;
    }
    for (int i = 0; i < out.length; i++) {
      TypedProperty p = typed.get(i);
      JsonNode v = props.get(p.name());
      if (v == null || v.isNull()) {
        continue;
      }
      out[i] =
          switch (p.type()) {
            case STRING -> v.isTextual() ? StringData.fromString(v.asText()) : null;
            case INT -> v.isIntegralNumber() && v.canConvertToInt() ? (Object) v.asInt() : null;
            case LONG -> v.isIntegralNumber() && v.canConvertToLong() ? (Object) v.asLong() : null;
            case FLOAT -> v.isNumber() ? (Object) v.floatValue() : null;
            case DOUBLE -> v.isNumber() ? (Object) v.asDouble() : null;
            case BOOLEAN -> v.isBoolean() ? (Object) v.asBoolean() : null;
          };
      if (out[i] == null) {
        throw new RecordRejectedException(
            RejectReason.SCHEMA_MISMATCH,
            "property '"
                + p.name()
                + "' must be "
                + p.type().spelling()
                + ", got "
                + v.getNodeType());
      }
    }
    return out;
  }

  private String refreshRegion(JsonNode props, Geometry g) throws RecordRejectedException {
    if (!regions.enabled()
        || props == null
        || !regions.refreshKind().equals(props.path("kind").asText(null))) {
      return null;
    }
    JsonNode name = props.get(regions.nameProperty());
    if (name == null || !name.isTextual() || name.asText().isBlank()) {
      throw new RecordRejectedException(
          RejectReason.SCHEMA_MISMATCH,
          "boundary refresh needs a non-empty string property '" + regions.nameProperty() + "'");
    }
    if (!(g instanceof Polygonal)) {
      throw new RecordRejectedException(
          RejectReason.SCHEMA_MISMATCH,
          "boundary refresh of '"
              + name.asText()
              + "' must be a Polygon or MultiPolygon, got "
              + g.getGeometryType());
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

  /**
   * Little-endian 2D WKB of a point, written directly: the general writer costs several times more
   * for points.
   */
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
}
