package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.CoordinateSequence;
import org.locationtech.jts.geom.CoordinateSequenceFilter;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.io.ParseException;
import org.spatialingest.config.InputConfig.InputFormat;

/**
 * A record's {@code geometry} value to a JTS geometry, read per {@code input.format} by that
 * format's reader ({@link GeoJsonGeometryReader}, {@link WktGeometryReader}, {@link Wkb} for hex
 * and base64; {@code geojson} also takes a WKT string, as before), then capped: at most {@code
 * transform.max-vertices} ({@code too_many_vertices}), not empty, finite ordinates. A string the
 * format cannot read is refused with the format that would read it ({@link FormatHint}). Not
 * thread-safe: one per parser.
 */
final class GeometryDecoder {
  /** One format's reader of the geometry value. */
  @FunctionalInterface
  private interface Reader {
    Geometry read(JsonNode geometry) throws RecordRejectedException;
  }

  private final InputFormat format;
  private final GeometryFactory factory;
  private final int maxVertices;
  private final Reader reader;

  GeometryDecoder(InputFormat format, GeometryFactory factory, int maxVertices) {
    this.format = format;
    this.factory = factory;
    this.maxVertices = maxVertices;
    GeoJsonGeometryReader geoJson = new GeoJsonGeometryReader(factory);
    WktGeometryReader wkt = new WktGeometryReader(factory);
    Wkb wkb = new Wkb(factory);
    this.reader =
        switch (format) {
          case GEOJSON -> node -> node.isTextual() ? wkt.read(node.asText()) : geoJson.read(node);
          case FEATURE -> geoJson::read;
          case WKT -> node -> wkt.read(text(node));
          case WKB_HEX -> node -> wkb.readHex(text(node));
          case WKB_BASE64 -> node -> wkb.readBase64(text(node));
        };
  }

  /** The geometry of the record, within the caps. */
  Geometry decode(TelemetryRecord record) throws RecordRejectedException {
    return record.point() != null
        ? capped(factory.createPoint(record.point()))
        : decode(record.geometry());
  }

  /** The geometry of {@code node} (null = the field is missing), within the caps. */
  private Geometry decode(JsonNode node) throws RecordRejectedException {
    if (node == null || node.isNull()) {
      throw new RecordRejectedException(RejectReason.MISSING_GEOMETRY, "'geometry' is missing");
    }
    Geometry g;
    try {
      g = reader.read(node);
    } catch (RecordRejectedException e) {
      String hint = node.isTextual() ? FormatHint.forText(node.asText(), format) : null;
      throw hint == null ? e : new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, hint);
    }
    return capped(g);
  }

  private Geometry capped(Geometry g) throws RecordRejectedException {
    int vertices = g.getNumPoints();
    if (vertices > maxVertices) {
      throw new RecordRejectedException(
          RejectReason.TOO_MANY_VERTICES,
          g.getGeometryType()
              + " has "
              + vertices
              + " vertices, more than transform.max-vertices "
              + maxVertices);
    }
    if (g.isEmpty()) {
      throw new RecordRejectedException(
          RejectReason.EMPTY_GEOMETRY, g.getGeometryType() + " is empty");
    }
    if (!finite(g)) {
      throw new RecordRejectedException(
          RejectReason.NON_FINITE_COORDINATES, "geometry has NaN or infinite ordinates");
    }
    return g;
  }

  /**
   * A JTS reader's refusal of a {@code format} string: {@code unknown_geometry_type} when its
   * message starts with {@code unknownType}, else {@code unparseable_geometry}.
   */
  static RecordRejectedException refused(String format, String unknownType, ParseException e) {
    String m = String.valueOf(e.getMessage());
    RejectReason reason =
        m.startsWith(unknownType)
            ? RejectReason.UNKNOWN_GEOMETRY_TYPE
            : RejectReason.UNPARSEABLE_GEOMETRY;
    return new RecordRejectedException(reason, format + ": " + m);
  }

  /**
   * The geometry string of a WKT or WKB format; anything else is refused with what it is and what
   * would read it.
   */
  private String text(JsonNode node) throws RecordRejectedException {
    if (!node.isTextual()) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, FormatHint.forNode(node, format));
    }
    return node.asText();
  }

  private static boolean finite(Geometry g) {
    if (g instanceof Point p) {
      Coordinate c = p.getCoordinate();
      return Double.isFinite(c.x) && Double.isFinite(c.y);
    }
    boolean[] ok = {true};
    g.apply(
        new CoordinateSequenceFilter() {
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
}
