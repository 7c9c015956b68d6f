package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.spatialingest.config.JobConfig;

/**
 * A geometry (or record) in another encoding than input.format: the reject says what would read it.
 */
class FormatMismatchTest {
  private static final String HEX = "\"0101000000000000000000F03F0000000000000040\""; // POINT(1 2)
  private static final String BASE64 = "\"AQEAAAAAAAAAAADwPwAAAAAAAABA\""; // POINT(1 2)
  private static final String WKT = "\"POINT(1 2)\"";
  private static final String GEOJSON = "{\"type\":\"Point\",\"coordinates\":[1,2]}";
  private static final String GEOJSON_TEXT =
      "\"{\\\"type\\\":\\\"Point\\\",\\\"coordinates\\\":[1,2]}\"";

  @ParameterizedTest(name = "{1} under {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "geojson    | HEX     | geometry is a string that looks like WKB hex; input.format is geojson (accepts a GeoJSON"
            + " object or WKT); set input.format: wkb-hex",
        "geojson    | BASE64  | looks like WKB base64; input.format is geojson (accepts a GeoJSON object or WKT); set"
            + " input.format: wkb-base64",
        "geojson    | GEOJSON_TEXT | geometry is a string holding JSON text; input.format is geojson (accepts a GeoJSON"
            + " object or WKT): send the GeoJSON object itself, not a string",
        "wkt        | GEOJSON | geometry is a GeoJSON object; input.format is wkt (accepts a WKT string); set"
            + " input.format: geojson",
        "wkt        | HEX     | input.format is wkt (accepts a WKT string); set input.format: wkb-hex",
        "wkt        | BASE64  | set input.format: wkb-base64",
        "wkt        | GEOJSON_TEXT | looks like GeoJSON; input.format is wkt (accepts a WKT string); set input.format:"
            + " geojson and send the object itself, not a string",
        "wkb-hex    | WKT     | looks like WKT; input.format is wkb-hex (accepts a hex string of WKB); set input.format:"
            + " wkt (or geojson, which also reads WKT)",
        "wkb-hex    | BASE64  | set input.format: wkb-base64",
        "wkb-hex    | GEOJSON | geometry is a GeoJSON object; input.format is wkb-hex (accepts a hex string of WKB); set"
            + " input.format: geojson",
        "wkb-base64 | HEX     | looks like WKB hex; input.format is wkb-base64 (accepts a base64 string of WKB); set"
            + " input.format: wkb-hex",
        "wkb-base64 | WKT     | set input.format: wkt",
        "wkb-base64 | GEOJSON | set input.format: geojson",
      })
  void aGeometryInAnotherEncodingNamesTheFormatThatReadsIt(
      String format, String geometry, String message) {
    RecordRejectedException e = reject(format, record(geometryOf(geometry)));
    assertThat(e.reason()).isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    assertThat(e.getMessage()).contains(message);
  }

  @ParameterizedTest(name = "{1} under {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "wkt | WKT",
        "wkb-hex | HEX",
        "wkb-base64 | BASE64",
        "geojson | GEOJSON",
        "geojson | WKT"
      })
  void everyEncodingParsesUnderItsOwnFormat(String format, String geometry) throws Exception {
    assertThat(parser(format).parse(bytes(record(geometryOf(geometry))), 1L)).isNotNull();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "geojson | \"POINT(1\"   | WKT: ",
        "geojson | \"CIRCLE(1 2)\" | WKT: Unknown geometry type",
        "wkb-hex | \"zz\"        | WKB: not an even-length hex string",
        "wkb-hex | \"0101\"      | WKB: ",
      })
  void aBrokenGeometryOfTheRightEncodingKeepsItsParserMessage(
      String format, String geometry, String message) {
    assertThat(reject(format, record(geometry)).getMessage()).startsWith(message);
  }

  @ParameterizedTest(name = "{1} under feature")
  @CsvSource(
      delimiter = '|',
      value = {"WKT | looks like WKT", "HEX | looks like WKB hex"})
  void aFeatureWithAnEncodedGeometrySaysWhatItIs(String geometry, String message) {
    RecordRejectedException e =
        reject(
            "feature",
            "{\"type\":\"Feature\",\"id\":\"f\",\"geometry\":"
                + geometryOf(geometry)
                + ",\"properties\":{\"event_time\":1}}");
    assertThat(e.reason()).isEqualTo(RejectReason.UNPARSEABLE_GEOMETRY);
    assertThat(e.getMessage())
        .contains(
            message
                + "; input.format is feature (accepts a GeoJSON Feature with a"
                + " GeoJSON geometry object)");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "GEOJSON | set input.format: geojson",
        "HEX | set input.format: wkb-hex",
        "WKT | set input.format: wkt"
      })
  void aPlainRecordUnderFeatureNamesTheFormatItsGeometrySuggests(String geometry, String message) {
    RecordRejectedException e = reject("feature", record(geometryOf(geometry)));
    assertThat(e.reason()).isEqualTo(RejectReason.MALFORMED_JSON);
    assertThat(e.getMessage())
        .contains(
            "input.format is feature (accepts a GeoJSON Feature with a GeoJSON geometry"
                + " object) but the record has no \"type\":\"Feature\"")
        .contains(message);
  }

  @ParameterizedTest(name = "under {0}")
  @CsvSource({"geojson", "wkt", "wkb-hex"})
  void aFeatureUnderARecordFormatIsToldToUseFeature(String format) {
    RecordRejectedException e =
        reject(
            format,
            "{\"type\":\"Feature\",\"id\":\"f\",\"geometry\":"
                + GEOJSON
                + ",\"properties\":{\"event_time\":1}}");
    assertThat(e.reason()).isEqualTo(RejectReason.MISSING_TIME);
    assertThat(e.getMessage())
        .contains("the record is a GeoJSON Feature")
        .contains("input.format is " + format)
        .endsWith("set input.format: feature");
  }

  private static String geometryOf(String name) {
    return switch (name) {
      case "HEX" -> HEX;
      case "BASE64" -> BASE64;
      case "WKT" -> WKT;
      case "GEOJSON" -> GEOJSON;
      case "GEOJSON_TEXT" -> GEOJSON_TEXT;
      default -> throw new IllegalArgumentException(name);
    };
  }

  private static String record(String geometry) {
    return "{\"id\":\"r\",\"event_time\":1,\"geometry\":" + geometry + "}";
  }

  private static RecordRejectedException reject(String format, String json) {
    RecordRejectedException e =
        catchThrowableOfType(
            RecordRejectedException.class, () -> parser(format).parse(bytes(json), 1L));
    assertThat(e).as("%s under %s", json, format).isNotNull();
    return e;
  }

  private static TelemetryParser parser(String format) {
    return new TelemetryParser(
        HilbertCurve.CRS84, JobConfig.fromMap(Map.of("input.format", format)));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
