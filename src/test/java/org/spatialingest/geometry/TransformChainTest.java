package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.Polygon;
import org.locationtech.jts.io.ByteOrderValues;
import org.locationtech.jts.io.WKBReader;
import org.locationtech.jts.io.WKBWriter;
import org.locationtech.jts.io.WKTWriter;
import org.locationtech.jts.operation.valid.IsValidOp;
import org.locationtech.proj4j.CRSFactory;
import org.locationtech.proj4j.CoordinateTransformFactory;
import org.locationtech.proj4j.ProjCoordinate;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.TelemetryTable;

/**
 * The transform chain on generated realistic shapes, every input format, reprojection, repair and
 * simplification.
 */
class TransformChainTest {
  private static TelemetryParser parser(String... keyValues) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put(keyValues[i], keyValues[i + 1]);
    }
    return new TelemetryParser(HilbertCurve.CRS84, JobConfig.fromMap(m));
  }

  private static GenericRowData parse(TelemetryParser p, String json)
      throws RecordRejectedException {
    return parsed(p, json).row();
  }

  private static ParsedRow parsed(TelemetryParser p, String json) throws RecordRejectedException {
    return p.parse(json.getBytes(StandardCharsets.UTF_8), 5L);
  }

  private static Geometry geometry(GenericRowData row) throws Exception {
    return new WKBReader().read((byte[]) row.getField(TelemetryTable.GEOMETRY));
  }

  private static RejectReason reason(TelemetryParser p, String json) {
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> parse(p, json));
    assertThat(e).as(json.length() > 200 ? json.substring(0, 200) : json).isNotNull();
    return e.reason();
  }

  @ParameterizedTest
  @ValueSource(ints = {2_000, 20_000, 120_000})
  void validStarsPassUnrepairedWithExactBbox(int vertices) throws Exception {
    TelemetryParser p =
        parser("transform.max-vertices", "200000", "transform.max-record-bytes", "16MiB");
    Polygon star = Shapes.star(13, 52, vertices, 0.5);
    ParsedRow parsed = parsed(p, Shapes.record("s", Shapes.geoJson(star), null));
    GenericRowData row = parsed.row();
    assertThat(parsed.repaired()).isFalse();
    Geometry g = geometry(row);
    assertThat(g.getNumPoints()).isEqualTo(vertices + 1);
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMAX))
        .isCloseTo(13.5, within(1e-9));
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMIN))
        .isCloseTo(12.5, within(1e-3));
    assertThat(row.getLong(TelemetryTable.HILBERT))
        .isEqualTo(
            HilbertCurve.CRS84.key(
                (row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                            .getDouble(TelemetryTable.XMIN)
                        + row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                            .getDouble(TelemetryTable.XMAX))
                    / 2,
                (row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                            .getDouble(TelemetryTable.YMIN)
                        + row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                            .getDouble(TelemetryTable.YMAX))
                    / 2));
  }

  @Test
  void ringWithHolesKeepsItsHoles() throws Exception {
    Polygon ring = Shapes.ringWithHoles(-70, -33, 4_000, 6);
    assertThat(ring.isValid()).isTrue();
    GenericRowData row = parse(parser(), Shapes.record("r", Shapes.geoJson(ring), null));
    Polygon out = (Polygon) geometry(row);
    assertThat(out.getNumInteriorRing()).isEqualTo(6);
    assertThat(out.getArea()).isCloseTo(ring.getArea(), within(1e-9));
  }

  @Test
  void bowTieIsRepairedIntoTwoTriangles() throws Exception {
    Polygon bowTie = Shapes.bowTie(10, 10, 1, 5_000);
    assertThat(bowTie.isValid()).isFalse();
    TelemetryParser p = parser();
    ParsedRow parsed = parsed(p, Shapes.record("b", Shapes.geoJson(bowTie), null));
    GenericRowData row = parsed.row();
    assertThat(parsed.repaired()).isTrue();
    Geometry g = geometry(row);
    assertThat(g.getGeometryType()).isEqualTo("MultiPolygon");
    assertThat(g.getNumGeometries()).isEqualTo(2);
    assertThat(IsValidOp.isValid(g)).isTrue();
    assertThat(g.getArea()).isCloseTo(0.5, within(1e-6));
    assertThat(row.getString(TelemetryTable.GEOMETRY_TYPE).toString()).isEqualTo("MultiPolygon");
  }

  @Test
  void withoutRepairAnInvalidGeometryIsRejected() {
    TelemetryParser p = parser("transform.repair", "false");
    assertThat(reason(p, Shapes.record("b", Shapes.geoJson(Shapes.bowTie(0, 0, 1)), null)))
        .isEqualTo(RejectReason.INVALID_GEOMETRY);
    TelemetryParser unchecked = parser("transform.validate", "false", "transform.repair", "false");
    assertThat(
            catchThrowableOfType(
                RecordRejectedException.class,
                () ->
                    parse(
                        unchecked,
                        Shapes.record("b", Shapes.geoJson(Shapes.bowTie(0, 0, 1)), null))))
        .isNull();
  }

  @Test
  void antimeridianMultiPolygonStaysTwoValidParts() throws Exception {
    var mp = Shapes.antimeridian(-17, 2, 3_000);
    GenericRowData row = parse(parser(), Shapes.record("a", Shapes.geoJson(mp), null));
    Geometry g = geometry(row);
    assertThat(g.getNumGeometries()).isEqualTo(2);
    assertThat(IsValidOp.isValid(g)).isTrue();
    // the bbox of an RFC 7946 antimeridian split spans the whole longitude range (documented)
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMIN))
        .isEqualTo(-180.0);
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMAX))
        .isEqualTo(180.0);
  }

  @Test
  void simplificationOnlyAboveTheThresholdAndTopologyStaysValid() throws Exception {
    Polygon ring = Shapes.ringWithHoles(0, 0, 20_000, 4);
    String json = Shapes.record("s", Shapes.geoJson(ring), null);
    TelemetryParser topo =
        parser("transform.simplify-tolerance", "0.001", "transform.simplify-min-vertices", "10000");
    ParsedRow simplified = parsed(topo, json);
    Geometry t = geometry(simplified.row());
    assertThat(simplified.simplified()).isTrue();
    assertThat(t.getNumPoints()).isLessThan(ring.getNumPoints() / 4);
    assertThat(IsValidOp.isValid(t)).isTrue();
    assertThat(((Polygon) t).getNumInteriorRing()).isEqualTo(4);

    TelemetryParser dp =
        parser(
            "transform.simplify-tolerance",
            "0.001",
            "transform.simplify-min-vertices",
            "10000",
            "transform.simplify-method",
            "douglas-peucker");
    Geometry d = geometry(parse(dp, json));
    assertThat(d.getNumPoints()).isLessThan(ring.getNumPoints() / 4);

    TelemetryParser high =
        parser("transform.simplify-tolerance", "0.001", "transform.simplify-min-vertices", "50000");
    ParsedRow kept = parsed(high, json);
    assertThat(geometry(kept.row()).getNumPoints()).isEqualTo(ring.getNumPoints());
    assertThat(kept.simplified()).isFalse();
  }

  @Test
  void wktAndWkbFormats() throws Exception {
    Polygon star = Shapes.star(5, 5, 1_000, 1, 0.5);
    Geometry fromWkt =
        geometry(
            parse(
                parser("input.format", "wkt"),
                Shapes.record("w", "\"" + new WKTWriter().write(star) + "\"", null)));
    assertThat(fromWkt.equalsExact(star, 1e-9)).isTrue();
    for (int order : new int[] {ByteOrderValues.BIG_ENDIAN, ByteOrderValues.LITTLE_ENDIAN}) {
      byte[] wkb = new WKBWriter(2, order).write(star);
      Geometry hex =
          geometry(
              parse(
                  parser("input.format", "wkb-hex"),
                  Shapes.record("h", "\"" + WKBWriter.toHex(wkb) + "\"", null)));
      Geometry b64 =
          geometry(
              parse(
                  parser("input.format", "wkb-base64"),
                  Shapes.record("b", "\"" + Base64.getEncoder().encodeToString(wkb) + "\"", null)));
      assertThat(hex.equalsExact(star)).isTrue();
      assertThat(b64.equalsExact(star)).isTrue();
    }
    TelemetryParser hex = parser("input.format", "wkb-hex");
    assertThat(reason(hex, Shapes.record("x", "\"0101\"", null)))
        .isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    assertThat(reason(hex, Shapes.record("x", "\"zz\"", null)))
        .isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    assertThat(reason(hex, Shapes.record("x", "\"abc\"", null)))
        .isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    assertThat(reason(hex, Shapes.record("x", "{\"type\":\"Point\"}", null)))
        .isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    // type code 99 is no geometry
    assertThat(
            reason(hex, Shapes.record("x", "\"0163000000000000000000F03F000000000000F03F\"", null)))
        .isEqualTo(RejectReason.UNKNOWN_GEOMETRY_TYPE);
    assertThat(
            reason(parser("input.format", "wkt"), Shapes.record("x", "{\"type\":\"Point\"}", null)))
        .isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
  }

  @Test
  void wkbPointFastPathMatchesJtsInBothByteOrders() throws Exception {
    Geometry pt = Shapes.F.createPoint(new Coordinate(-122.4194155, 37.7749295));
    for (int order : new int[] {ByteOrderValues.BIG_ENDIAN, ByteOrderValues.LITTLE_ENDIAN}) {
      byte[] wkb = new WKBWriter(2, order).write(pt);
      assertThat(Wkb.isPoint2d(wkb)).isTrue();
      assertThat(new Wkb(Shapes.F).read(wkb).equalsExact(new WKBReader().read(wkb))).isTrue();
    }
    assertThat(Wkb.isPoint2d(new WKBWriter(3).write(Shapes.F.createPoint(new Coordinate(1, 2, 3)))))
        .isFalse();
    GenericRowData row =
        parse(
            parser("input.format", "wkb-hex"),
            Shapes.record("p", "\"" + WKBWriter.toHex(new WKBWriter(2).write(pt)) + "\"", null));
    assertThat(geometry(row).equalsExact(pt)).isTrue();
    assertThat(
            reason(
                parser("input.format", "wkb-hex"),
                Shapes.record(
                    "p",
                    "\""
                        + WKBWriter.toHex(
                            new WKBWriter(2)
                                .write(Shapes.F.createPoint(new Coordinate(Double.NaN, 1))))
                        + "\"",
                    null)))
        .isEqualTo(RejectReason.NON_FINITE_COORDINATES);
  }

  @Test
  void geoJsonFeatureWithTypedProperties() throws Exception {
    TelemetryParser p =
        parser(
            "input.format",
            "feature",
            "input.typed-properties",
            "speed:double,vehicle:string,count:long,moving:boolean,missing:string");
    GenericRowData row =
        parse(
            p,
            "{\"type\":\"Feature\",\"id\":17,\"geometry\":{\"type\":\"Point\","
                + "\"coordinates\":[13.4,52.5]},\"properties\":{\"event_time\":\"2026-11-29T10:00:00Z\",\"speed\":3,"
                + "\"vehicle\":\"v1\",\"count\":9,\"moving\":true,\"colour\":\"red\"}}");
    int base = TelemetryTable.FIELD_COUNT;
    assertThat(row.getArity()).isEqualTo(base + 5);
    assertThat(row.getString(TelemetryTable.ID).toString()).isEqualTo("17");
    assertThat(row.getDouble(base)).isEqualTo(3.0);
    assertThat(row.getString(base + 1).toString()).isEqualTo("v1");
    assertThat(row.getLong(base + 2)).isEqualTo(9L);
    assertThat(row.getBoolean(base + 3)).isTrue();
    assertThat(row.isNullAt(base + 4)).isTrue();
    assertThat(row.getString(TelemetryTable.PROPERTIES).toString())
        .isEqualTo("{\"colour\":\"red\"}");
    assertThat(
            TelemetryTable.schema(
                    JobConfig.fromMap(
                            Map.of(
                                "input.typed-properties",
                                "speed:double,vehicle:string,count:long,moving:boolean,missing:string"))
                        .input()
                        .typedProperties())
                .columns())
        .hasSize(base + 5);
    assertThat(reason(p, "{\"id\":\"a\",\"geometry\":\"POINT(1 1)\"}"))
        .isEqualTo(RejectReason.MALFORMED_JSON);
    assertThat(
            reason(
                p,
                "{\"type\":\"Feature\",\"id\":1.5,\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,1]},"
                    + "\"properties\":{\"event_time\":1}}"))
        .isEqualTo(RejectReason.INVALID_ID);
    assertThat(
            reason(
                p,
                "{\"type\":\"Feature\",\"id\":1,\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,1]},"
                    + "\"properties\":{\"event_time\":1,\"count\":1.5}}"))
        .isEqualTo(RejectReason.SCHEMA_MISMATCH);
  }

  @Test
  void reprojectionFromLaeaEuropeWithXEastingYNorthing() throws Exception {
    var crs = new CRSFactory();
    var forward =
        new CoordinateTransformFactory()
            .createTransform(crs.createFromName("EPSG:4326"), crs.createFromName("EPSG:3035"));
    ProjCoordinate m = new ProjCoordinate();
    forward.transform(new ProjCoordinate(13.4, 52.5), m);
    TelemetryParser p = parser("transform.reproject-from", "3035");
    GenericRowData row = parse(p, Shapes.record("p", "\"POINT(" + m.x + " " + m.y + ")\"", null));
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMIN))
        .isCloseTo(13.4, within(1e-7));
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.YMIN))
        .isCloseTo(52.5, within(1e-7));
    assertThat(reason(p, Shapes.record("p", "\"POINT(1e12 1e12)\"", null)))
        .isEqualTo(RejectReason.REPROJECTION_FAILED);
    // a star of 5k vertices in metres around Berlin comes back as a valid lon/lat polygon
    Polygon star = Shapes.star(m.x, m.y, 5_000, 20_000, 12_000);
    Geometry g =
        geometry(parse(p, Shapes.record("s", "\"" + new WKTWriter().write(star) + "\"", null)));
    assertThat(IsValidOp.isValid(g)).isTrue();
    assertThat(g.getEnvelopeInternal().getMinX()).isBetween(13.0, 13.4);
  }

  @Test
  void boundaryRefreshIsARowAndNamesItsRegion() throws Exception {
    TelemetryParser p = parser("regions.refresh-kind", "boundary_refresh");
    assertThat(
            parsed(
                    p,
                    Shapes.record(
                        "r",
                        Shapes.geoJson(Shapes.star(0, 0, 100, 1, 0.5)),
                        "{\"kind\":\"boundary_refresh\",\"region\":\"north\"}"))
                .refreshRegion())
        .isEqualTo("north");
    assertThat(
            parsed(p, Shapes.record("q", "\"POINT(1 1)\"", "{\"kind\":\"telemetry\"}"))
                .refreshRegion())
        .isNull();
  }

  @Test
  void regionIndexUsesPreparedPolygonsAndTheSmallestNameOnOverlap() throws Exception {
    WKBWriter w = new WKBWriter(2);
    var regions = new java.util.LinkedHashMap<String, RegionRefresh>();
    regions.put("west", new RegionRefresh("west", w.write(Shapes.box(-10, 40, 0, 50, 4)), 1));
    regions.put("east", new RegionRefresh("east", w.write(Shapes.box(0, 40, 10, 50, 4)), 1));
    regions.put("big", new RegionRefresh("big", w.write(Shapes.star(5, 45, 100_000, 3)), 1));
    regions.put(
        "ring", new RegionRefresh("ring", w.write(Shapes.ringWithHoles(20, 45, 2_000, 4)), 1));
    var index = RegionEnrichment.Index.build(regions.entrySet(), Shapes.F);
    assertThat(index.regionOf(-5, 45)).isEqualTo("west");
    assertThat(index.regionOf(5, 45)).isEqualTo("big"); // overlaps east: smallest name wins
    assertThat(index.regionOf(9.5, 49.5)).isEqualTo("east");
    assertThat(index.regionOf(20, 45)).isEqualTo("ring");
    assertThat(index.regionOf(20.6, 45)).isNull(); // inside a hole
    assertThat(index.regionOf(100, 0)).isNull();
    assertThat(
            RegionEnrichment.Index.build(List.<Map.Entry<String, RegionRefresh>>of(), Shapes.F)
                .regionOf(0, 0))
        .isNull();
  }
}
