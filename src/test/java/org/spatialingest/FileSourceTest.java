package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.locationtech.proj4j.CRSFactory;
import org.locationtech.proj4j.CoordinateTransform;
import org.locationtech.proj4j.CoordinateTransformFactory;
import org.locationtech.proj4j.ProjCoordinate;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.SourceRecord;

/**
 * {@code source: file:<dir>} through the same job and sinks: a directory of newline-delimited WKT
 * records in EPSG:3035 metres (reprojected to CRS84), CRLF and blank lines, bad lines rejected with
 * file and line, exactly-once through a failure in the middle of a file (line numbers stay right
 * after the restore).
 */
class FileSourceTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @Test
  void backfillFromFilesCommitsRowsAndRejectsWithFileAndLine(
      @TempDir Path tmp, @InjectMiniCluster MiniCluster mc) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("input"));
    CoordinateTransform toLaea =
        new CoordinateTransformFactory()
            .createTransform(
                new CRSFactory().createFromName("EPSG:4326"),
                new CRSFactory().createFromName("EPSG:3035"));
    Map<String, double[]> goodLonLat = new HashMap<>();
    Map<String, String> badByFileLine = new HashMap<>(); // "file:line" -> reason
    int lines = 0;
    for (int f = 0; f < 2; f++) {
      StringBuilder sb = new StringBuilder();
      Path file = dir.resolve("part-" + f + ".ndjson");
      for (int i = 1; i <= 1_500; i++) {
        String id = "f" + f + "-" + i;
        String nl = f == 1 ? "\r\n" : "\n";
        if (i % 100 == 7) {
          sb.append("{\"id\":\"")
              .append(id)
              .append("\",\"event_time\":1795946400000,\"geometry\":\"POINT(1e12 1e12)\"}");
          badByFileLine.put(file.toUri().getPath() + ":" + i, "reprojection_failed");
        } else if (i % 100 == 8) {
          sb.append("{\"id\":\"").append(id).append("\",\"event_time\":");
          badByFileLine.put(file.toUri().getPath() + ":" + i, "malformed_json");
        } else if (i % 100 == 9) {
          sb.append("{\"id\":\"")
              .append(id)
              .append("\",\"event_time\":1795946400000,\"geometry\":\"POINT(1\"}");
          badByFileLine.put(file.toUri().getPath() + ":" + i, "unparseable_geometry");
        } else if (i % 100 == 10) {
          sb.append("   "); // blank: not a record
          sb.append(nl);
          lines++;
          continue;
        } else {
          double lon = -5 + (i % 300) * 0.1;
          double lat = 40 + f * 5 + (i % 50) * 0.1;
          ProjCoordinate m = new ProjCoordinate();
          toLaea.transform(new ProjCoordinate(lon, lat), m);
          sb.append(
              String.format(
                  Locale.ROOT,
                  "{\"id\":\"%s\",\"event_time\":\"2026-11-29T10:00:00Z\",\"geometry\":\"POINT(%.4f %.4f)\"}",
                  id,
                  m.x,
                  m.y));
          goodLonLat.put(id, new double[] {lon, lat});
        }
        sb.append(nl);
        lines++;
      }
      Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    }
    Files.writeString(dir.resolve(".hidden"), "ignored\n"); // hidden files are skipped

    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "source", "file:" + dir,
                "input.format", "wkt",
                "transform.reproject-from", "EPSG:3035",
                "catalog.warehouse", tmp.resolve("warehouse").toString(),
                "checkpoint.interval", "200ms",
                "sink.max-latency", "1s"));
    Configuration conf = TestKit.fixedDelayRestarts(3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.configureCheckpointing(env, config);
    FailOnceAfterCheckpoint.reset();
    JobStart start = SpatialIngestJob.decideStart(env, config);
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, true, start)
            .map(new FailOnceAfterCheckpoint(1_000_000, 100))
            .name("fail-once");
    SpatialIngestJob.Transformed t = SpatialIngestJob.transformWithRejects(records, config);
    SpatialIngestJob.sink(t, config, start);
    JobClient client = env.executeAsync("file-backfill");
    JobID id = client.getJobID();
    client.getJobExecutionResult().get();
    assertThat(FailOnceAfterCheckpoint.FAILED.get()).as("the injected failure happened").isTrue();
    assertThat(mc.getArchivedExecutionGraph(id).get().getFailureInfo())
        .as("the injected failure is seen")
        .isNotNull();

    List<Record> rows = TestKit.rows(TestKit.table(config));
    List<Record> rejects =
        TestKit.rows(
            org.spatialingest.table.Catalogs.catalogLoader(config)
                .loadCatalog()
                .loadTable(org.spatialingest.table.Catalogs.rejectsTableIdentifier(config)));
    assertThat(lines).isEqualTo(3_000);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(goodLonLat.keySet());
    assertThat(rows.size() + rejects.size())
        .as("non-blank lines = rows + rejects")
        .isEqualTo(3_000 - 30);
    for (Record r : rows) {
      double[] expected = goodLonLat.get((String) r.getField("id"));
      assertThat((Double) ((Record) r.getField("bbox")).getField("xmin"))
          .isCloseTo(expected[0], within(1e-6));
      assertThat((Double) ((Record) r.getField("bbox")).getField("ymin"))
          .isCloseTo(expected[1], within(1e-6));
    }
    Map<String, String> seen = new HashMap<>();
    for (Record r : rejects) {
      String where =
          ((String) r.getField("file")).replaceFirst("^file:", "") + ":" + r.getField("line");
      assertThat(r.getField("topic")).isNull();
      assertThat(seen.put(where, (String) r.getField("reason"))).as("once: %s", where).isNull();
    }
    assertThat(seen).isEqualTo(badByFileLine);
  }
}
