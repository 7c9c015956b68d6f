package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.Shapes;
import org.spatialingest.local.TelemetryGenerator;

/**
 * Regions live in broadcast state: refreshes seen before a stop-with-savepoint enrich points that
 * arrive after the restart, with no refresh in the second run (so no race between the two inputs:
 * the result is deterministic). A later refresh replaces a region whole. With {@code
 * regions.partition} the table is also partitioned by region.
 */
class RegionStateRestartTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void regionsSurviveAStopWithSavepoint(@TempDir Path dir) throws Exception {
    String topic = "regions";
    kafka.createTopic(topic, 2);
    // "east" is first sent too small, then replaced by a refresh with a later event time, then by
    // an older one
    // (ignored): only the middle polygon may be in effect after the restart
    List<byte[]> refreshes = new ArrayList<>();
    refreshes.add(refresh("west", Shapes.box(-10, 30, 0, 70, 4), "2026-11-29T09:00:00Z"));
    refreshes.add(refresh("east", Shapes.box(0, 30, 1, 31, 4), "2026-11-29T09:00:00Z"));
    refreshes.add(refresh("east", Shapes.box(0, 30, 40, 70, 4), "2026-11-29T09:30:00Z"));
    refreshes.add(refresh("east", Shapes.box(100, 0, 101, 1, 4), "2026-11-29T09:10:00Z"));
    TestKit.produceValues(kafka.bootstrapServers(), topic, refreshes.subList(0, 2));
    TestKit.produceValues(kafka.bootstrapServers(), topic, refreshes.subList(2, 4));

    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of(
                "regions.refresh-kind",
                "boundary_refresh",
                "regions.partition",
                "true",
                "sink.max-latency",
                "1s"));
    StreamExecutionEnvironment env1 = StreamExecutionEnvironment.getExecutionEnvironment();
    env1.setParallelism(2);
    SpatialIngestJob.build(env1, config, false);
    JobClient run1 = env1.executeAsync("regions-1");
    Table table = TestKit.table(config);
    awaitRows(table, refreshes.size());
    String savepoint =
        run1.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(60, TimeUnit.SECONDS);

    Map<String, TelemetryGenerator.Record> points =
        TestKit.produce(kafka.bootstrapServers(), topic, new TelemetryGenerator(5, 8, 0, 0), 300);

    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    StreamExecutionEnvironment env2 = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env2.setParallelism(2);
    SpatialIngestJob.build(env2, config, false);
    JobClient run2 = env2.executeAsync("regions-2");
    List<Record> rows = awaitRows(table, refreshes.size() + points.size());
    run2.cancel().get(30, TimeUnit.SECONDS);

    Map<String, Integer> byRegion = new HashMap<>();
    int enriched = 0;
    for (Record r : rows) {
      TelemetryGenerator.Record p = points.get((String) r.getField("id"));
      if (p == null) {
        continue;
      }
      String expected =
          p.x() < 0 ? "west" : p.x() <= 40 && p.y() >= 30 && p.y() <= 70 ? "east" : null;
      assertThat(r.getField("region"))
          .as("region of %s at (%s, %s)", r.getField("id"), p.x(), p.y())
          .isEqualTo(expected);
      byRegion.merge(String.valueOf(expected), 1, Integer::sum);
      enriched++;
    }
    assertThat(enriched).isEqualTo(points.size());
    assertThat(byRegion).containsKeys("west", "east");

    // regions.partition: identity partitions by region after the day, one file never mixes regions
    assertThat(table.spec().fields())
        .extracting(f -> f.name())
        .containsExactly("event_time_day", "region");
    java.util.Set<Object> partitionRegions = new java.util.HashSet<>();
    try (var tasks = table.newScan().planFiles()) {
      for (var task : tasks) {
        partitionRegions.add(task.file().partition().get(1, String.class));
      }
    }
    assertThat(partitionRegions).contains("west", "east");
  }

  private static byte[] refresh(String name, org.locationtech.jts.geom.Geometry g, String time) {
    return ("{\"id\":\"refresh-"
            + name
            + "-"
            + time
            + "\",\"event_time\":\""
            + time
            + "\",\"geometry\":"
            + Shapes.geoJson(g)
            + ",\"properties\":{\"kind\":\"boundary_refresh\",\"region\":\""
            + name
            + "\"}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static List<Record> awaitRows(Table table, int expected) throws Exception {
    long deadline = System.currentTimeMillis() + 90_000;
    List<Record> rows = List.of();
    while (System.currentTimeMillis() < deadline) {
      rows = TestKit.rows(table);
      if (rows.size() >= expected) {
        return rows;
      }
      Thread.sleep(300);
    }
    throw new AssertionError("only " + rows.size() + " of " + expected + " rows committed in time");
  }
}
