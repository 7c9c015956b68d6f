package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.io.WKBReader;
import org.locationtech.jts.io.WKBWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.spatialingest.config.JobConfig;

/**
 * Records/s per core (one thread) through the whole transform chain ({@link TelemetryParser#parse}:
 * JSON, geometry, caps, validate/repair, bbox, Hilbert key, WKB out; default keys) next to a bare
 * parse of the same record: Jackson tree + JTS geometry (GeoJSON tree reader, or hex decode + JTS
 * {@link WKBReader}) — the reference limit.
 *
 * <p>Run: {@code mvn -B -o -llr -Pjmh test-compile exec:exec} (see
 * src/site/markdown/benchmarks.md). Not part of {@code mvn verify}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx2g", "-XX:+UseParallelGC"})
public class TransformBenchmark {
  @Param({"point-geojson", "point-wkb-hex", "polygon-1k", "polygon-100k"})
  public String input;

  private byte[] record;
  private TelemetryParser chain;
  private final ObjectMapper mapper = new ObjectMapper();
  private final GeometryFactory factory = new GeometryFactory();
  private final GeoJsonGeometryReader geoJson = new GeoJsonGeometryReader(factory);
  private final WKBReader wkbReader = new WKBReader(factory);
  private boolean wkb;

  @Setup
  public void setUp() {
    String json;
    String format = "geojson";
    switch (input) {
      case "point-geojson" ->
          json =
              Shapes.record(
                  "p-1",
                  "{\"type\":\"Point\",\"coordinates\":[13.4050012,52.5200066]}",
                  "{\"vehicle\":\"v7\",\"speed_kmh\":42.5}");
      case "point-wkb-hex" -> {
        String hex =
            WKBWriter.toHex(
                new WKBWriter(2)
                    .write(factory.createPoint(new Coordinate(13.4050012, 52.5200066))));
        json = Shapes.record("p-1", "\"" + hex + "\"", "{\"vehicle\":\"v7\",\"speed_kmh\":42.5}");
        format = "wkb-hex";
        wkb = true;
      }
      case "polygon-1k" ->
          json = Shapes.record("s-1", Shapes.geoJsonRounded(Shapes.star(13, 52, 1_000, 0.2)), null);
      case "polygon-100k" ->
          json =
              Shapes.record("s-1", Shapes.geoJsonRounded(Shapes.star(13, 52, 100_000, 0.2)), null);
      default -> throw new IllegalArgumentException(input);
    }
    record = json.getBytes(StandardCharsets.UTF_8);
    chain =
        new TelemetryParser(HilbertCurve.CRS84, JobConfig.fromMap(Map.of("input.format", format)));
  }

  /** The whole transform chain, default keys (validate + repair on). */
  @Benchmark
  public Object chain() throws Exception {
    return chain.parse(record, 1L);
  }

  /**
   * Reference, the cheapest JSON route: stream the record's top level, skip every field but the
   * geometry, build the JTS geometry from it.
   */
  @Benchmark
  public Geometry bareStreamingParse() throws Exception {
    return streamingParse(false);
  }

  /**
   * Reference: {@link #bareStreamingParse} that reads the whole record, as the chain must: every
   * token to the end of the input (the fields after {@code geometry} too, and the check that
   * nothing follows the object), still building nothing but the geometry. What the chain costs over
   * this is its own work (id, time, row), not reading the record.
   */
  @Benchmark
  public Geometry bareWholeRecordParse() throws Exception {
    return streamingParse(true);
  }

  /**
   * Streams the record's top level, skipping every field but the geometry, and builds the JTS
   * geometry; {@code wholeRecord}: goes on to the end of the input instead of stopping there.
   */
  private Geometry streamingParse(boolean wholeRecord) throws Exception {
    Geometry geometry = null;
    try (com.fasterxml.jackson.core.JsonParser p = mapper.getFactory().createParser(record)) {
      p.nextToken();
      while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
        String name = p.currentName();
        p.nextToken();
        if (name.equals("geometry")) {
          geometry =
              wkb
                  ? wkbReader.read(WKBReader.hexToBytes(p.getText()))
                  : geoJson.read(mapper.readTree(p));
          if (!wholeRecord) {
            return geometry;
          }
        } else {
          p.skipChildren();
        }
      }
      if (wholeRecord && p.nextToken() != null) {
        throw new IllegalStateException("content after the record");
      }
    }
    return geometry;
  }

  /**
   * Reference: parse the JSON record (a tree, as the chain did before streaming) and build the JTS
   * geometry.
   */
  @Benchmark
  public Geometry bareParse() throws Exception {
    JsonNode root = mapper.readTree(record);
    JsonNode g = root.get("geometry");
    if (wkb) {
      return wkbReader.read(WKBReader.hexToBytes(g.asText()));
    }
    return geoJson.read(g);
  }
}
