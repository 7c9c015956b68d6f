package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.apache.flink.table.data.GenericRowData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.io.WKBReader;
import org.spatialingest.table.TelemetryTable;

class TelemetryParserTest {
  private final TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84);

  @Test
  void geoJsonPointBecomesARowWithBboxAndKey() throws Exception {
    GenericRowData row =
        parse(
            "{\"id\":\"a\",\"event_time\":\"2026-11-29T10:00:00Z\",\"geometry\":"
                + "{\"type\":\"Point\",\"coordinates\":[13.4,52.5]},\"properties\":{\"speed\":3}}");
    Geometry g = new WKBReader().read((byte[]) row.getField(TelemetryTable.GEOMETRY));
    assertThat(g.getCoordinate().x).isEqualTo(13.4);
    assertThat(g.getCoordinate().y).isEqualTo(52.5);
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMIN))
        .isEqualTo(13.4);
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.YMAX))
        .isEqualTo(52.5);
    assertThat(row.getTimestamp(TelemetryTable.EVENT_TIME, 6).getMillisecond())
        .isEqualTo(1795946400000L); // 2026-11-29T10:00:00Z
    assertThat(row.getTimestamp(TelemetryTable.INGEST_TIME, 6).getMillisecond()).isEqualTo(77L);
    assertThat(row.getLong(TelemetryTable.HILBERT)).isEqualTo(HilbertCurve.CRS84.key(13.4, 52.5));
    assertThat(row.getString(TelemetryTable.PROPERTIES).toString()).isEqualTo("{\"speed\":3}");
  }

  @Test
  void wktPolygonAndEpochMillis() throws Exception {
    GenericRowData row =
        parse(
            "{\"id\":\"p\",\"event_time\":1795860000000,"
                + "\"geometry\":\"POLYGON((0 0, 4 0, 4 2, 0 2, 0 0))\"}");
    assertThat(row.getString(TelemetryTable.GEOMETRY_TYPE).toString()).isEqualTo("Polygon");
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.XMAX))
        .isEqualTo(4.0);
    assertThat(
            row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS)
                .getDouble(TelemetryTable.YMAX))
        .isEqualTo(2.0);
    assertThat(row.isNullAt(TelemetryTable.PROPERTIES)).isTrue();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "not json | malformed_json",
        "[1,2] | malformed_json",
        "{\"event_time\":1,\"geometry\":\"POINT(1 1)\"} | missing_id",
        "{\"id\":\"\",\"event_time\":1,\"geometry\":\"POINT(1 1)\"} | missing_id",
        "{\"id\":\"a\",\"geometry\":\"POINT(1 1)\"} | missing_time",
        "{\"id\":\"a\",\"event_time\":\"yesterday\",\"geometry\":\"POINT(1 1)\"} | invalid_time",
        "{\"id\":\"a\",\"event_time\":1} | missing_geometry",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":\"POINT(1\"} | unparseable_geometry",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":{\"type\":\"Circle\",\"coordinates\":[1,1]}} | unknown_geometry_type",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":\"POINT EMPTY\"} | empty_geometry",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":\"POINT(200 10)\"} | coordinates_out_of_range",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":\"POINT(1 1)\",\"properties\":[1]} | schema_mismatch",
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[0,0],[1,1]]]}} | unparseable_geometry",
      })
  void badRecordsSayWhy(String json, String reason) {
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> parse(json));
    assertThat(e).as(json).isNotNull();
    assertThat(e.reason().code()).isEqualTo(reason);
  }

  private static final String ONE = "{\"id\":\"b\",\"event_time\":1,\"geometry\":\"POINT(1 1)\"}";

  static Stream<Arguments> trailing() {
    return Stream.of(
        arguments("{\"id\":\"c\"}", 0, "'{\"id\":\"c\"}'"),
        arguments("  " + ONE, 2, "'{\"id\":\"b\",\"event_tim...'"),
        arguments("garbage", 0, "'garbage'"),
        arguments(" ]", 1, "']'"),
        arguments(",", 0, "','"),
        arguments(" 42", 1, "'42'"),
        arguments("\"x\"", 0, "'\"x\"'"));
  }

  @ParameterizedTest
  @MethodSource("trailing")
  void aRecordIsOneJsonValue(String tail, int whitespace, String shown) {
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> parse(ONE + tail));
    assertThat(e).as(ONE + tail).isNotNull();
    assertThat(e.reason()).isEqualTo(RejectReason.MALFORMED_JSON);
    assertThat(e.getMessage())
        .contains(
            "trailing content after the JSON object at byte "
                + (ONE.length() + whitespace)
                + ": "
                + shown);
  }

  @Test
  void trailingControlBytesAreShownEscaped() {
    byte[] json =
        "{\"id\":\"a\",\"event_time\":1,\"geometry\":\"POINT(1 1)\"}\0\0"
            .getBytes(StandardCharsets.UTF_8);
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> parser.parse(json, 1L));
    assertThat(e.getMessage()).contains("at byte " + (json.length - 2) + ": '\\u0000\\u0000'");
  }

  @Test
  void whitespaceAfterTheValueIsFine() throws Exception {
    for (String tail : new String[] {"", " ", "\n", "\r\n", " \t \r\n "}) {
      GenericRowData row =
          parse("{\"id\":\"w\",\"event_time\":1,\"geometry\":\"POINT(1 1)\"}" + tail);
      assertThat(row.getString(TelemetryTable.ID).toString()).isEqualTo("w");
    }
    GenericRowData lead = parse(" \r\n{\"id\":\"w\",\"event_time\":1,\"geometry\":\"POINT(1 1)\"}");
    assertThat(lead.getString(TelemetryTable.ID).toString()).isEqualTo("w");
  }

  @Test
  void hilbertKeysKeepNeighboursClose() {
    HilbertCurve h = HilbertCurve.CRS84;
    long here = h.key(13.40, 52.50);
    long near = h.key(13.4001, 52.5001);
    long far = h.key(-70.0, -33.0);
    assertThat(Math.abs(here - near)).isLessThan(Math.abs(here - far));
    assertThat(h.key(-180, -90)).isZero();
    // a 2x2 grid visits its cells in the U order of the first-order Hilbert curve
    assertThat(
            new long[] {
              HilbertCurve.index(0, 0),
              HilbertCurve.index(0, 1),
              HilbertCurve.index(1, 1),
              HilbertCurve.index(1, 0)
            })
        .isSorted();
  }

  private GenericRowData parse(String json) throws RecordRejectedException {
    return parser.parse(json.getBytes(StandardCharsets.UTF_8), 77L).row();
  }
}
