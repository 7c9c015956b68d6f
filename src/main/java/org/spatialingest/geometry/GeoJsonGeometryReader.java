package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.LineString;
import org.locationtech.jts.geom.LinearRing;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygon;

/**
 * Reads a GeoJSON geometry object (RFC 7946) that Jackson already parsed into a tree, straight into
 * JTS.
 *
 * <p>Reading from the tree the record parser already holds avoids serializing the geometry back to
 * text for jts-io-common's reader (which also pulls in json-simple). Positions keep x and y; a
 * third ordinate is ignored. The commonest geometry, a 2D point, can also be read straight from the
 * parser ({@link #streamedPoint}), without a tree.
 */
public final class GeoJsonGeometryReader {
  private final GeometryFactory factory;

  public GeoJsonGeometryReader(GeometryFactory factory) {
    this.factory = factory;
  }

  /** The geometry of a GeoJSON geometry object; anything else, or what JTS refuses, is a reject. */
  public Geometry read(JsonNode node) throws RecordRejectedException {
    try {
      return geometry(node);
    } catch (IllegalArgumentException e) { // JTS constructors: e.g. a LineString of one position
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON: " + e.getMessage());
    }
  }

  private Geometry geometry(JsonNode node) throws RecordRejectedException {
    if (node == null || !node.isObject()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry must be an object");
    }
    String type = node.path("type").asText("");
    if (type.isEmpty()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry has no 'type'");
    }
    if (type.equals("GeometryCollection")) {
      JsonNode members = node.path("geometries");
      if (!members.isArray()) {
        throw new RecordRejectedException(
            RejectReason.UNPARSEABLE_GEOMETRY, "GeometryCollection needs 'geometries'");
      }
      Geometry[] parts = new Geometry[members.size()];
      for (int i = 0; i < parts.length; i++) {
        parts[i] = geometry(members.get(i));
      }
      return factory.createGeometryCollection(parts);
    }
    JsonNode c = node.get("coordinates");
    if (c == null || !c.isArray()) {
      if (type.isEmpty()) {
        throw new RecordRejectedException(
            RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry has no 'type'");
      }
      if (!isKnownType(type)) {
        throw new RecordRejectedException(
            RejectReason.UNKNOWN_GEOMETRY_TYPE, "unknown GeoJSON type '" + type + "'");
      }
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, type + " has no 'coordinates' array");
    }
    return switch (type) {
      case "Point" -> point(c);
      case "LineString" -> factory.createLineString(positions(c));
      case "Polygon" -> polygon(c);
      case "MultiPoint" -> {
        Point[] points = new Point[c.size()];
        for (int i = 0; i < points.length; i++) {
          points[i] = point(c.get(i));
        }
        yield factory.createMultiPoint(points);
      }
      case "MultiLineString" -> {
        LineString[] lines = new LineString[c.size()];
        for (int i = 0; i < lines.length; i++) {
          lines[i] = factory.createLineString(positions(c.get(i)));
        }
        yield factory.createMultiLineString(lines);
      }
      case "MultiPolygon" -> {
        Polygon[] polygons = new Polygon[c.size()];
        for (int i = 0; i < polygons.length; i++) {
          polygons[i] = polygon(c.get(i));
        }
        yield factory.createMultiPolygon(polygons);
      }
      default ->
          throw new RecordRejectedException(
              RejectReason.UNKNOWN_GEOMETRY_TYPE, "unknown GeoJSON type '" + type + "'");
    };
  }

  /**
   * The position of a GeoJSON geometry object that is exactly {@code
   * {"type":"Point","coordinates":[x,y]}} (in either field order, x and y numbers), read from the
   * parser without a tree: the same coordinate {@link #read} would make of that object's tree.
   * {@code p} stands at the object's {@code START_OBJECT} and is left at its {@code END_OBJECT}
   * either way; null when the object is anything else (then read its tree). Malformed JSON throws
   * as reading the tree would.
   */
  static Coordinate streamedPoint(JsonParser p) throws IOException {
    boolean pointType = false;
    Coordinate position = null;
    int depth = 1;
    JsonToken t;
    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      t = p.nextToken();
      if (name.equals("type")
          && !pointType
          && t == JsonToken.VALUE_STRING
          && p.getText().equals("Point")) {
        pointType = true;
      } else if (name.equals("coordinates") && position == null && t == JsonToken.START_ARRAY) {
        depth = 2;
        double x;
        double y;
        if (!(t = p.nextToken()).isNumeric()) {
          break;
        }
        x = p.getDoubleValue();
        if (!(t = p.nextToken()).isNumeric()) {
          break;
        }
        y = p.getDoubleValue();
        if ((t = p.nextToken()) != JsonToken.END_ARRAY) {
          break;
        }
        depth = 1;
        position = new Coordinate(x, y);
      } else {
        break;
      }
    }
    if (t == JsonToken.END_OBJECT && depth == 1) {
      return pointType ? position : null;
    }
    // not a simple point: skip to the end of the object, t being the first token not taken
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      p.skipChildren();
    } else if (t == JsonToken.END_ARRAY || t == JsonToken.END_OBJECT) {
      depth--;
    }
    while (depth > 0) {
      t = p.nextToken();
      if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
        p.skipChildren();
      } else if (t == JsonToken.END_ARRAY || t == JsonToken.END_OBJECT) {
        depth--;
      }
    }
    return null;
  }

  private static boolean isKnownType(String type) {
    return switch (type) {
      case "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon" ->
          true;
      default -> false;
    };
  }

  private Point point(JsonNode position) throws RecordRejectedException {
    if (position.isArray() && position.isEmpty()) {
      return factory.createPoint();
    }
    return factory.createPoint(position(position));
  }

  private Polygon polygon(JsonNode rings) throws RecordRejectedException {
    if (!rings.isArray()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "Polygon rings must be an array");
    }
    if (rings.isEmpty()) {
      return factory.createPolygon();
    }
    LinearRing shell = ring(rings.get(0));
    LinearRing[] holes = new LinearRing[rings.size() - 1];
    for (int i = 0; i < holes.length; i++) {
      holes[i] = ring(rings.get(i + 1));
    }
    return factory.createPolygon(shell, holes);
  }

  private LinearRing ring(JsonNode positions) throws RecordRejectedException {
    try {
      return factory.createLinearRing(positions(positions));
    } catch (IllegalArgumentException e) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "invalid ring: " + e.getMessage());
    }
  }

  private Coordinate[] positions(JsonNode array) throws RecordRejectedException {
    if (!array.isArray()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "expected an array of positions");
    }
    Coordinate[] out = new Coordinate[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = position(array.get(i));
    }
    return out;
  }

  private static Coordinate position(JsonNode p) throws RecordRejectedException {
    if (!p.isArray() || p.size() < 2 || !p.get(0).isNumber() || !p.get(1).isNumber()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY,
          "a position must be an array of at least two numbers, got " + abbreviate(p.toString()));
    }
    return new Coordinate(p.get(0).doubleValue(), p.get(1).doubleValue());
  }

  static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 77) + "...";
  }
}
