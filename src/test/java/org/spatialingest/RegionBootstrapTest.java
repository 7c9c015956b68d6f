package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.RegionBootstrap;
import org.spatialingest.geometry.Shapes;

/**
 * {@code regions.bootstrap}: regions known before the stream's first refresh, so the very first
 * rows of a fresh start already get their region. Real file-source job. (That a newer streamed
 * refresh replaces a bootstrap region follows from the same merge by event time the broadcast state
 * uses.)
 */
class RegionBootstrapTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  @Test
  void theFirstRowsGetTheirRegionFromTheBootstrapFile(@TempDir Path dir) throws Exception {
    Path regions = dir.resolve("regions.ndjson");
    Files.write(
        regions,
        List.of(
            refresh("west", Shapes.box(-10, 30, 0, 70, 4), "2026-11-29T09:00:00Z"),
            refresh("east", Shapes.box(0, 30, 40, 70, 4), "2026-11-29T09:00:00Z")));
    // the stream holds points only: without the bootstrap no region would ever be known in this run
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      lines.add(point("w" + i, -5, 40 + i * 0.1));
      lines.add(point("e" + i, 20, 40 + i * 0.1));
      lines.add(point("n" + i, 120, -40));
    }
    Path in = dir.resolve("in");
    Files.createDirectories(in);
    Files.write(in.resolve("a.ndjson"), lines);
    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "source",
                "file:" + in,
                "catalog.warehouse",
                dir.resolve("warehouse").toString(),
                "checkpoint.interval",
                "300ms",
                "sink.max-latency",
                "1s",
                "regions.refresh-kind",
                "boundary_refresh",
                "regions.bootstrap",
                regions.toString()));

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("bootstrap");

    Map<String, String> regionById = new HashMap<>();
    for (Record r : TestKit.rows(TestKit.table(config))) {
      regionById.put((String) r.getField("id"), (String) r.getField("region"));
    }
    assertThat(regionById).hasSize(600);
    for (int i = 0; i < 200; i++) {
      assertThat(regionById.get("w" + i)).as("w%d", i).isEqualTo("west");
      assertThat(regionById.get("e" + i)).as("e%d", i).isEqualTo("east");
      assertThat(regionById.get("n" + i)).as("n%d", i).isNull();
    }
  }

  @Test
  void aLineThatIsNotARefreshNamesTheKeyAndTheLine(@TempDir Path dir) throws Exception {
    Path regions = dir.resolve("regions.ndjson");
    Files.write(
        regions,
        List.of(
            refresh("west", Shapes.box(-10, 30, 0, 70, 4), "2026-11-29T09:00:00Z"),
            point("p", 1, 1)));
    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "regions.refresh-kind",
                "boundary_refresh",
                "regions.bootstrap",
                regions.toString()));
    assertThatThrownBy(() -> RegionBootstrap.load(config))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("regions.bootstrap: line 2")
        .hasMessageContaining("not a boundary refresh");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("regions.bootstrap", regions.toString())))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("regions.refresh-kind");
  }

  private static String refresh(String name, org.locationtech.jts.geom.Geometry g, String time) {
    return "{\"id\":\"refresh-"
        + name
        + "\",\"event_time\":\""
        + time
        + "\",\"geometry\":"
        + Shapes.geoJson(g)
        + ",\"properties\":{\"kind\":\"boundary_refresh\",\"region\":\""
        + name
        + "\"}}";
  }

  private static String point(String id, double x, double y) {
    return "{\"id\":\""
        + id
        + "\",\"event_time\":\"2026-11-29T10:00:00Z\",\"geometry\":{\"type\":\"Point\","
        + "\"coordinates\":["
        + x
        + ","
        + y
        + "]}}";
  }
}
