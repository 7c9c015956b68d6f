package org.spatialingest.geometry;

import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.LinearRing;
import org.locationtech.jts.geom.MultiPolygon;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.Polygon;

/**
 * Generated test shapes (no downloaded data): stars, rings with holes, bow-ties, antimeridian
 * multipolygons.
 */
public final class Shapes {
  public static final GeometryFactory F = new GeometryFactory();

  private Shapes() {}

  /**
   * A star whose spikes are as deep as about two vertex spacings: the shape of a detailed real
   * boundary. (Deep spikes, e.g. inner = 0.6 outer, make every segment's envelope overlap thousands
   * of others: IsValidOp then costs ~23 s at 120k vertices on this machine.)
   */
  public static Polygon star(double cx, double cy, int vertices, double outer) {
    return star(cx, cy, vertices, outer, outer * (1 - 4 * Math.PI / vertices));
  }

  /**
   * A valid star-shaped polygon of {@code vertices} vertices (alternating radii) around (cx, cy),
   * in degrees.
   */
  public static Polygon star(double cx, double cy, int vertices, double outer, double inner) {
    Coordinate[] c = new Coordinate[vertices + 1];
    for (int i = 0; i < vertices; i++) {
      double a = 2 * Math.PI * i / vertices;
      double r = i % 2 == 0 ? outer : inner;
      c[i] = new Coordinate(cx + r * Math.cos(a), cy + r * Math.sin(a));
    }
    c[vertices] = c[0].copy();
    return F.createPolygon(c);
  }

  private static LinearRing circle(double cx, double cy, double r, int n, boolean clockwise) {
    Coordinate[] c = new Coordinate[n + 1];
    for (int i = 0; i < n; i++) {
      double a = 2 * Math.PI * i / n * (clockwise ? -1 : 1);
      c[i] = new Coordinate(cx + r * Math.cos(a), cy + r * Math.sin(a));
    }
    c[n] = c[0].copy();
    return F.createLinearRing(c);
  }

  /** A ring of {@code n} vertices with {@code holes} round holes inside it. */
  public static Polygon ringWithHoles(double cx, double cy, int n, int holes) {
    LinearRing shell = circle(cx, cy, 1.0, n, false);
    LinearRing[] h = new LinearRing[holes];
    for (int i = 0; i < holes; i++) {
      double a = 2 * Math.PI * i / holes;
      h[i] =
          circle(cx + 0.6 * Math.cos(a), cy + 0.6 * Math.sin(a), 0.15, Math.max(8, n / 20), true);
    }
    return F.createPolygon(shell, h);
  }

  /** A self-intersecting bow-tie (invalid; GeometryFixer makes two triangles of it). */
  public static Polygon bowTie(double x, double y, double size) {
    return F.createPolygon(
        new Coordinate[] {
          new Coordinate(x, y),
          new Coordinate(x + size, y + size),
          new Coordinate(x + size, y),
          new Coordinate(x, y + size),
          new Coordinate(x, y)
        });
  }

  /** A bow-tie whose edges are densified to about {@code vertices} vertices. */
  public static Polygon bowTie(double x, double y, double size, int vertices) {
    Coordinate[] corners = bowTie(x, y, size).getCoordinates();
    int perEdge = Math.max(1, vertices / 4);
    Coordinate[] c = new Coordinate[4 * perEdge + 1];
    for (int e = 0;
        e < 4;
        e++) { // linear subdivision keeps the self-intersection (JTS's Densifier would repair it)
      Coordinate a = corners[e];
      Coordinate b = corners[e + 1];
      for (int i = 0; i < perEdge; i++) {
        double t = (double) i / perEdge;
        c[e * perEdge + i] = new Coordinate(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
      }
    }
    c[c.length - 1] = c[0].copy();
    return F.createPolygon(c);
  }

  /**
   * A star whose spikes are deep (inner radius 0.6 of the outer): the shape users sent with 120,000
   * vertices. Valid, but every spike's box overlaps thousands of others, so {@code IsValidOp} alone
   * took ~23 s on it before the budget.
   */
  public static Polygon deepStar(double cx, double cy, int vertices, double outer) {
    return star(cx, cy, vertices, outer, 0.6 * outer);
  }

  /**
   * A star whose inner vertices are all the centre: one ring touching itself {@code vertices / 2}
   * times. Invalid.
   */
  public static Polygon touchingStar(double cx, double cy, int vertices, double outer) {
    return star(cx, cy, vertices, outer, 0);
  }

  /**
   * The star polygon {n/k}: {@code n} points on a circle joined every {@code k}-th, so edges cross
   * each other about n·(k−1) times (k ≈ n/2: every edge crosses almost every other). Invalid.
   */
  public static Polygon crossingStar(double cx, double cy, int n, int k, double r) {
    Coordinate[] c = new Coordinate[n + 1];
    for (int i = 0; i < n; i++) {
      double a = 2 * Math.PI * ((long) i * k % n) / n;
      c[i] = new Coordinate(cx + r * Math.cos(a), cy + r * Math.sin(a));
    }
    c[n] = c[0].copy();
    return F.createPolygon(c);
  }

  /**
   * A 2 × 2 degree square with {@code side × side} round holes of {@code perHole} vertices on a
   * grid; hole radius = {@code fill} × half the grid spacing, so {@code fill < 1} gives disjoint
   * holes (valid) and {@code fill > 1.42} holes overlapping their neighbours (invalid). With {@code
   * bowTieShell} the shell crosses itself too.
   */
  public static Polygon gridOfHoles(
      double cx, double cy, int side, int perHole, double fill, boolean bowTieShell) {
    Coordinate[] shell =
        bowTieShell
            ? new Coordinate[] {
              new Coordinate(cx - 1, cy - 1),
              new Coordinate(cx + 1, cy + 1),
              new Coordinate(cx + 1, cy - 1),
              new Coordinate(cx - 1, cy + 1),
              new Coordinate(cx - 1, cy - 1)
            }
            : new Coordinate[] {
              new Coordinate(cx - 1, cy - 1),
              new Coordinate(cx + 1, cy - 1),
              new Coordinate(cx + 1, cy + 1),
              new Coordinate(cx - 1, cy + 1),
              new Coordinate(cx - 1, cy - 1)
            };
    LinearRing[] holes = new LinearRing[side * side];
    double step = 2.0 / side;
    for (int i = 0; i < side; i++) {
      for (int j = 0; j < side; j++) {
        holes[i * side + j] =
            circle(
                cx - 1 + (i + 0.5) * step,
                cy - 1 + (j + 0.5) * step,
                fill * step / 2,
                perHole,
                true);
      }
    }
    return F.createPolygon(F.createLinearRing(shell), holes);
  }

  /** WKT with coordinates rounded to 7 decimals (about 1 cm): compact text for big shapes. */
  public static String wktRounded(Geometry g) {
    org.locationtech.jts.io.WKTWriter w = new org.locationtech.jts.io.WKTWriter(2);
    w.setPrecisionModel(new org.locationtech.jts.geom.PrecisionModel(1e7));
    return w.write(g);
  }

  /** A region crossing the antimeridian as RFC 7946 wants it: two parts, one each side of ±180. */
  public static MultiPolygon antimeridian(double lat, double halfWidth, int verticesPerPart) {
    Polygon east = box(180 - halfWidth, lat - 1, 180, lat + 1, verticesPerPart);
    Polygon west = box(-180, lat - 1, -180 + halfWidth, lat + 1, verticesPerPart);
    return F.createMultiPolygon(new Polygon[] {east, west});
  }

  /** A box with its top edge densified to {@code vertices} vertices. */
  public static Polygon box(double x0, double y0, double x1, double y1, int vertices) {
    int n = Math.max(4, vertices);
    Coordinate[] c = new Coordinate[n + 1];
    c[0] = new Coordinate(x0, y0);
    c[1] = new Coordinate(x1, y0);
    int top = n - 2;
    for (int i = 0; i < top; i++) {
      c[2 + i] = new Coordinate(x1 - (x1 - x0) * i / (top - 1), y1);
    }
    c[n] = c[0].copy();
    return F.createPolygon(c);
  }

  /** GeoJSON with coordinates rounded to 7 decimals (about 1 cm): compact text for big shapes. */
  public static String geoJsonRounded(Geometry g) {
    Geometry copy = g.copy();
    copy.apply(
        (org.locationtech.jts.geom.CoordinateFilter)
            c -> {
              c.x = Math.round(c.x * 1e7) / 1e7;
              c.y = Math.round(c.y * 1e7) / 1e7;
            });
    copy.geometryChanged();
    return geoJson(copy);
  }

  /** GeoJSON geometry object text of a Point, Polygon or MultiPolygon. */
  public static String geoJson(Geometry g) {
    StringBuilder sb = new StringBuilder(g.getNumPoints() * 32 + 64);
    if (g instanceof Point p) {
      sb.append("{\"type\":\"Point\",\"coordinates\":");
      pos(sb, p.getCoordinate());
    } else if (g instanceof Polygon p) {
      sb.append("{\"type\":\"Polygon\",\"coordinates\":");
      rings(sb, p);
    } else if (g instanceof MultiPolygon m) {
      sb.append("{\"type\":\"MultiPolygon\",\"coordinates\":[");
      for (int i = 0; i < m.getNumGeometries(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        rings(sb, (Polygon) m.getGeometryN(i));
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException(g.getGeometryType());
    }
    return sb.append('}').toString();
  }

  private static void rings(StringBuilder sb, Polygon p) {
    sb.append('[');
    for (int r = 0; r <= p.getNumInteriorRing(); r++) {
      if (r > 0) {
        sb.append(',');
      }
      Coordinate[] cs = (r == 0 ? p.getExteriorRing() : p.getInteriorRingN(r - 1)).getCoordinates();
      sb.append('[');
      for (int i = 0; i < cs.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        pos(sb, cs[i]);
      }
      sb.append(']');
    }
    sb.append(']');
  }

  private static void pos(StringBuilder sb, Coordinate c) {
    sb.append('[').append(c.x).append(',').append(c.y).append(']');
  }

  /** A JSON telemetry record with the given geometry JSON (an object, or a quoted string). */
  public static String record(String id, String geometryJson, String propertiesJson) {
    return "{\"id\":\""
        + id
        + "\",\"event_time\":\"2026-11-29T10:00:00Z\",\"geometry\":"
        + geometryJson
        + (propertiesJson == null ? "" : ",\"properties\":" + propertiesJson)
        + "}";
  }
}
