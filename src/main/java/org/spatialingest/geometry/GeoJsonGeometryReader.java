package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.LineString;
import org.locationtech.jts.geom.LinearRing;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygon;

/**
 * Reads a GeoJSON geometry object (RFC 7946) that Jackson already parsed into a tree, straight into JTS.
 *
 * <p>Reading from the tree the record parser already holds avoids serializing the geometry back to text for
 * jts-io-common's reader (which also pulls in json-simple). Positions keep x and y; a third ordinate is ignored.
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
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON: " + e.getMessage());
    }
  }

  private Geometry geometry(JsonNode node) throws RecordRejectedException {
    if (node == null || !node.isObject()) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry must be an object");
    }
    String type = node.path("type").asText("");
    if (type.isEmpty()) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry has no 'type'");
    }
    if (type.equals("GeometryCollection")) {
      JsonNode members = node.path("geometries");
      if (!members.isArray()) {
        throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeometryCollection needs 'geometries'");
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
        throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "GeoJSON geometry has no 'type'");
      }
      if (!isKnownType(type)) {
        throw new RecordRejectedException(RejectReason.UNKNOWN_GEOMETRY_TYPE, "unknown GeoJSON type '" + type + "'");
      }
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, type + " has no 'coordinates' array");
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
      default -> throw new RecordRejectedException(RejectReason.UNKNOWN_GEOMETRY_TYPE,
          "unknown GeoJSON type '" + type + "'");
    };
  }

  private static boolean isKnownType(String type) {
    return switch (type) {
      case "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon" -> true;
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
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "Polygon rings must be an array");
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
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "invalid ring: " + e.getMessage());
    }
  }

  private Coordinate[] positions(JsonNode array) throws RecordRejectedException {
    if (!array.isArray()) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "expected an array of positions");
    }
    Coordinate[] out = new Coordinate[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = position(array.get(i));
    }
    return out;
  }

  private static Coordinate position(JsonNode p) throws RecordRejectedException {
    if (!p.isArray() || p.size() < 2 || !p.get(0).isNumber() || !p.get(1).isNumber()) {
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY,
          "a position must be an array of at least two numbers, got " + abbreviate(p.toString()));
    }
    return new Coordinate(p.get(0).doubleValue(), p.get(1).doubleValue());
  }

  static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 77) + "...";
  }
}
