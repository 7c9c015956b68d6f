package org.spatialingest.geometry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Bad inputs, each with the reject reason it must get, for the job configured by {@link #CONFIG}:
 * GeoJSON input, typed properties {@code vehicle:string, speed_kmh:double}, regions from {@code
 * boundary_refresh} records, at most {@link #MAX_VERTICES} vertices and {@link #MAX_BYTES} bytes
 * per record, the default geometry budget. Every entry's bytes are unique; an entry may name a part
 * its reject message must contain.
 */
public final class BadInputCorpus {
  public static final int MAX_VERTICES = 150_000;
  public static final int MAX_BYTES = 4_000_000;
  public static final Map<String, String> CONFIG =
      Map.of(
          "input.format", "geojson",
          "input.typed-properties", "vehicle:string,speed_kmh:double",
          "regions.refresh-kind", "boundary_refresh",
          "transform.max-vertices", Integer.toString(MAX_VERTICES),
          "transform.max-record-bytes", Integer.toString(MAX_BYTES));

  public record Bad(String name, byte[] value, RejectReason reason, String message) {
    public Bad(String name, byte[] value, RejectReason reason) {
      this(name, value, reason, null);
    }

    @Override
    public String toString() {
      return name + " -> " + reason.code();
    }
  }

  private BadInputCorpus() {}

  private static List<Bad> all;

  /** The corpus, built once per JVM (its big shapes take seconds to write). */
  public static synchronized List<Bad> all() {
    if (all == null) {
      all = List.copyOf(build());
    }
    return all;
  }

  private static List<Bad> build() {
    List<Bad> out = new ArrayList<>();
    String t = "\"event_time\":\"2026-11-29T10:00:00Z\"";
    add(out, "plain text", "not json at all", RejectReason.MALFORMED_JSON);
    add(out, "JSON array", "[1,2,3]", RejectReason.MALFORMED_JSON);
    out.add(new Bad("empty value", new byte[0], RejectReason.MALFORMED_JSON));
    add(
        out,
        "truncated JSON",
        "{\"id\":\"t1\"," + t + ",\"geometry\":{\"type\":\"Point\"",
        RejectReason.MALFORMED_JSON);
    out.add(
        new Bad(
            "invalid UTF-8",
            new byte[] {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'},
            RejectReason.MALFORMED_JSON));
    add(out, "JSON string", "\"just a string\"", RejectReason.MALFORMED_JSON);
    add(out, "no id", "{" + t + ",\"geometry\":\"POINT(1 1)\"}", RejectReason.MISSING_ID);
    add(
        out,
        "blank id",
        "{\"id\":\"  \"," + t + ",\"geometry\":\"POINT(1 2)\"}",
        RejectReason.MISSING_ID);
    add(
        out,
        "null id",
        "{\"id\":null," + t + ",\"geometry\":\"POINT(1 3)\"}",
        RejectReason.MISSING_ID);
    add(
        out,
        "number id",
        "{\"id\":42," + t + ",\"geometry\":\"POINT(1 4)\"}",
        RejectReason.INVALID_ID);
    add(
        out,
        "object id",
        "{\"id\":{\"x\":1}," + t + ",\"geometry\":\"POINT(1 5)\"}",
        RejectReason.INVALID_ID);
    add(
        out,
        "no event_time",
        "{\"id\":\"b1\",\"geometry\":\"POINT(1 6)\"}",
        RejectReason.MISSING_TIME);
    add(
        out,
        "null event_time",
        "{\"id\":\"b2\",\"event_time\":null,\"geometry\":\"POINT(1 7)\"}",
        RejectReason.MISSING_TIME);
    add(
        out,
        "word time",
        "{\"id\":\"b3\",\"event_time\":\"yesterday\",\"geometry\":\"POINT(1 8)\"}",
        RejectReason.INVALID_TIME);
    add(
        out,
        "time without offset",
        "{\"id\":\"b4\",\"event_time\":\"2026-11-29T10:00:00\",\"geometry\":\"POINT(1 9)\"}",
        RejectReason.INVALID_TIME);
    add(
        out,
        "boolean time",
        "{\"id\":\"b5\",\"event_time\":true,\"geometry\":\"POINT(1 10)\"}",
        RejectReason.INVALID_TIME);
    add(
        out,
        "fractional time",
        "{\"id\":\"b6\",\"event_time\":1.5,\"geometry\":\"POINT(1 11)\"}",
        RejectReason.INVALID_TIME);
    add(out, "no geometry", "{\"id\":\"c1\"," + t + "}", RejectReason.MISSING_GEOMETRY);
    add(
        out,
        "GeoJSON Circle",
        "{\"id\":\"c2\"," + t + ",\"geometry\":{\"type\":\"Circle\",\"coordinates\":[1,2]}}",
        RejectReason.UNKNOWN_GEOMETRY_TYPE);
    add(
        out,
        "WKT CIRCLE",
        "{\"id\":\"c3\"," + t + ",\"geometry\":\"CIRCLE(1 2)\"}",
        RejectReason.UNKNOWN_GEOMETRY_TYPE);
    add(
        out,
        "WKT cut short",
        "{\"id\":\"c4\"," + t + ",\"geometry\":\"POINT(1\"}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "WKT one-point line",
        "{\"id\":\"c5\"," + t + ",\"geometry\":\"LINESTRING(1 1)\"}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "string coordinates",
        "{\"id\":\"c6\"," + t + ",\"geometry\":{\"type\":\"Point\",\"coordinates\":[\"a\",\"b\"]}}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "two-position ring",
        "{\"id\":\"c7\","
            + t
            + ",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[0,0],[1,1]]]}}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "GeoJSON without type",
        "{\"id\":\"c8\"," + t + ",\"geometry\":{\"coordinates\":[1,2]}}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "number geometry",
        "{\"id\":\"c9\"," + t + ",\"geometry\":42}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "one-position LineString",
        "{\"id\":\"c10\"," + t + ",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[1,2]]}}",
        RejectReason.UNPARSEABLE_GEOMETRY);
    add(
        out,
        "POINT EMPTY",
        "{\"id\":\"d1\"," + t + ",\"geometry\":\"POINT EMPTY\"}",
        RejectReason.EMPTY_GEOMETRY);
    add(
        out,
        "empty MultiPolygon",
        "{\"id\":\"d2\"," + t + ",\"geometry\":{\"type\":\"MultiPolygon\",\"coordinates\":[]}}",
        RejectReason.EMPTY_GEOMETRY);
    add(
        out,
        "infinite ordinate",
        "{\"id\":\"e1\"," + t + ",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1e999,0]}}",
        RejectReason.NON_FINITE_COORDINATES);
    add(
        out,
        "WKT NaN",
        "{\"id\":\"e2\"," + t + ",\"geometry\":\"POINT(NaN 1)\"}",
        RejectReason.NON_FINITE_COORDINATES);
    add(
        out,
        "longitude 200",
        "{\"id\":\"f1\"," + t + ",\"geometry\":\"POINT(200 10)\"}",
        RejectReason.COORDINATES_OUT_OF_RANGE);
    add(
        out,
        "latitude -95",
        "{\"id\":\"f2\"," + t + ",\"geometry\":{\"type\":\"Point\",\"coordinates\":[10,-95]}}",
        RejectReason.COORDINATES_OUT_OF_RANGE);
    add(
        out,
        "polygon vertex out of range",
        "{\"id\":\"f3\"," + t + ",\"geometry\":\"POLYGON((170 0, 181 0, 181 1, 170 1, 170 0))\"}",
        RejectReason.COORDINATES_OUT_OF_RANGE);
    add(
        out,
        "too many vertices",
        Shapes.record("g1", "\"" + compactStarWkt(MAX_VERTICES + 10) + "\"", null),
        RejectReason.TOO_MANY_VERTICES);
    add(
        out,
        "record too large",
        Shapes.record("h1", "\"POINT(1 1)\"", "{\"padding\":\"" + "x".repeat(MAX_BYTES) + "\"}"),
        RejectReason.RECORD_TOO_LARGE);
    add(
        out,
        "collinear polygon",
        "{\"id\":\"i1\"," + t + ",\"geometry\":\"POLYGON((0 0, 1 1, 2 2, 0 0))\"}",
        RejectReason.UNREPAIRABLE_GEOMETRY);
    add(
        out,
        "properties array",
        "{\"id\":\"j1\"," + t + ",\"geometry\":\"POINT(2 1)\",\"properties\":[1]}",
        RejectReason.SCHEMA_MISMATCH);
    add(
        out,
        "speed as text",
        "{\"id\":\"j2\","
            + t
            + ",\"geometry\":\"POINT(2 2)\",\"properties\":{\"speed_kmh\":\"fast\"}}",
        RejectReason.SCHEMA_MISMATCH);
    add(
        out,
        "vehicle as number",
        "{\"id\":\"j3\"," + t + ",\"geometry\":\"POINT(2 3)\",\"properties\":{\"vehicle\":7}}",
        RejectReason.SCHEMA_MISMATCH);
    add(
        out,
        "refresh without a name",
        "{\"id\":\"j4\","
            + t
            + ",\"geometry\":\"POLYGON((0 0, 1 0, 1 1, 0 0))\",\"properties\":{\"kind\":\"boundary_refresh\"}}",
        RejectReason.SCHEMA_MISMATCH);
    add(
        out,
        "refresh of a point",
        "{\"id\":\"j5\","
            + t
            + ",\"geometry\":\"POINT(2 4)\",\"properties\":{\"kind\":\"boundary_refresh\",\"region\":\"x\"}}",
        RejectReason.SCHEMA_MISMATCH);
    // a record is one JSON value: nothing but whitespace may follow it
    String one = "{\"id\":\"k1\"," + t + ",\"geometry\":\"POINT(3 1)\"}";
    add(
        out,
        "two JSON objects on one line",
        one + "{\"id\":\"k2\"," + t + ",\"geometry\":\"POINT(3 2)\"}",
        RejectReason.MALFORMED_JSON,
        "trailing content after the JSON object at byte " + one.length() + ": '{\"id\"");
    String two = "{\"id\":\"k3\"," + t + ",\"geometry\":\"POINT(3 3)\"}";
    add(
        out,
        "trailing text",
        two + " trailing words",
        RejectReason.MALFORMED_JSON,
        "trailing content after the JSON object at byte "
            + (two.length() + 1)
            + ": 'trailing words'");
    add(
        out,
        "object then comma",
        "{\"id\":\"k4\"," + t + ",\"geometry\":\"POINT(3 4)\"},",
        RejectReason.MALFORMED_JSON,
        "trailing content");
    // event_time outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z (both ends, both encodings)
    String range = EventTime.RANGE;
    add(
        out,
        "epoch millis 1e18",
        "{\"id\":\"l1\",\"event_time\":1000000000000000000,\"geometry\":\"POINT(4 1)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "epoch millis just after 9999",
        "{\"id\":\"l2\",\"event_time\":"
            + (EventTime.MAX_MILLIS + 1)
            + ",\"geometry\":\"POINT(4 2)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "epoch millis just before 0001",
        "{\"id\":\"l3\",\"event_time\":"
            + (EventTime.MIN_MILLIS - 1)
            + ",\"geometry\":\"POINT(4 3)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "epoch millis beyond a long",
        "{\"id\":\"l4\",\"event_time\":100000000000000000000000," + "\"geometry\":\"POINT(4 4)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "ISO year 10000",
        "{\"id\":\"l5\",\"event_time\":\"+10000-01-01T00:00:00Z\",\"geometry\":\"POINT(4 5)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "ISO just before 0001",
        "{\"id\":\"l6\",\"event_time\":\"0000-12-31T23:59:59.999Z\","
            + "\"geometry\":\"POINT(4 6)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "ISO offset past 9999",
        "{\"id\":\"l7\",\"event_time\":\"9999-12-31T23:59:59-00:01\","
            + "\"geometry\":\"POINT(4 7)\"}",
        RejectReason.INVALID_TIME,
        range);
    add(
        out,
        "ISO year 300 million",
        "{\"id\":\"l8\",\"event_time\":\"+300000000-01-01T00:00:00Z\","
            + "\"geometry\":\"POINT(4 8)\"}",
        RejectReason.INVALID_TIME,
        range);
    // geometry work over the per-record budget
    add(
        out,
        "deep-spike star of 120k vertices",
        Shapes.record(
            "m1", "\"" + Shapes.wktRounded(Shapes.deepStar(5, 45, 120_000, 1)) + "\"", null),
        RejectReason.GEOMETRY_TOO_COMPLEX,
        "edge-pair tests");
    add(
        out,
        "self-touching star",
        Shapes.record(
            "m2", "\"" + Shapes.wktRounded(Shapes.touchingStar(5, 45, 2_000, 1)) + "\"", null),
        RejectReason.GEOMETRY_TOO_COMPLEX,
        "cross or touch at more than 1,000 points");
    add(
        out,
        "ring crossing itself everywhere",
        Shapes.record(
            "m3", "\"" + Shapes.wktRounded(Shapes.crossingStar(5, 45, 201, 100, 1)) + "\"", null),
        RejectReason.GEOMETRY_TOO_COMPLEX,
        "cross or touch at more than 1,000 points");
    add(
        out,
        "1,600 overlapping holes",
        Shapes.record(
            "m4",
            "\"" + Shapes.wktRounded(Shapes.gridOfHoles(5, 45, 40, 16, 1.6, false)) + "\"",
            null),
        RejectReason.GEOMETRY_TOO_COMPLEX,
        "1,601 rings");
    // a geometry in another encoding than input.format (geojson here) names the key and the value
    // that fits
    add(
        out,
        "WKB hex under geojson",
        "{\"id\":\"n1\"," + t + ",\"geometry\":\"0101000000000000000000F03F0000000000000040\"}",
        RejectReason.UNPARSEABLE_GEOMETRY,
        "looks like WKB hex; input.format is geojson (accepts a GeoJSON object or WKT); set input.format: wkb-hex");
    add(
        out,
        "WKB base64 under geojson",
        "{\"id\":\"n2\"," + t + ",\"geometry\":\"AQEAAAAAAAAAAADwPwAAAAAAAAhA\"}",
        RejectReason.UNPARSEABLE_GEOMETRY,
        "set input.format: wkb-base64");
    add(
        out,
        "GeoJSON as a string",
        "{\"id\":\"n3\","
            + t
            + ",\"geometry\":\"{\\\"type\\\":\\\"Point\\\",\\\"coordinates\\\":[1,2]}\"}",
        RejectReason.UNPARSEABLE_GEOMETRY,
        "not a string");
    add(
        out,
        "Feature under geojson",
        "{\"type\":\"Feature\",\"id\":\"n4\",\"geometry\":{\"type\":\"Point\","
            + "\"coordinates\":[1,2]},\"properties\":{\"event_time\":\"2026-11-29T10:00:00Z\"}}",
        RejectReason.MISSING_TIME,
        "set input.format: feature");
    return out;
  }

  /** A star ring in WKT with short coordinates, so many vertices stay under the byte cap. */
  static String compactStarWkt(int vertices) {
    StringBuilder sb = new StringBuilder(vertices * 16).append("POLYGON((");
    String first = null;
    for (int i = 0; i < vertices; i++) {
      double a = 2 * Math.PI * i / vertices;
      double r = i % 2 == 0 ? 1 : 0.5;
      String v =
          String.format(java.util.Locale.ROOT, "%.5f %.5f", r * Math.cos(a), r * Math.sin(a));
      if (first == null) {
        first = v;
      }
      sb.append(v).append(',');
    }
    return sb.append(first).append("))").toString();
  }

  private static void add(List<Bad> out, String name, String json, RejectReason reason) {
    add(out, name, json, reason, null);
  }

  private static void add(
      List<Bad> out, String name, String json, RejectReason reason, String message) {
    out.add(new Bad(name, json.getBytes(StandardCharsets.UTF_8), reason, message));
  }
}
