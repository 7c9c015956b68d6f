package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.io.WKBReader;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.TelemetryParser;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TelemetryTable;

/** Real broker, real MiniCluster, real Iceberg files: exactly-once through an injected failure. */
class EndToEndTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void everyRecordCommittedExactlyOnceThroughAFailure(@TempDir Path warehouse) throws Exception {
    String topic = "e2e";
    kafka.createTopic(topic, 3);
    int n = 10_000;
    Map<String, TelemetryGenerator.Record> sent =
        TestKit.produce(
            kafka.bootstrapServers(), topic, new TelemetryGenerator(7, 25, 250, 3_000), n);
    assertThat(sent.values().stream().filter(TelemetryGenerator.Record::polygon).count())
        .isEqualTo(40);

    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            warehouse,
            Map.of(
                "sink.max-latency", "1s",
                "sink.memory-budget", "2MB",
                "sink.target-file-size", "512KB"));
    Configuration conf = TestKit.fixedDelayRestarts(3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.configureCheckpointing(env, config);
    FailOnceAfterCheckpoint.reset();
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, true, SpatialIngestJob.decideStart(env, config))
            .map(new FailOnceAfterCheckpoint(150_000, 200))
            .name("fail-once");
    SpatialIngestJob.sink(SpatialIngestJob.transform(records, config), config);
    env.execute("e2e");

    assertThat(FailOnceAfterCheckpoint.FAILED.get()).as("the injected failure happened").isTrue();
    Table table = TestKit.table(config);
    List<Record> rows = TestKit.rows(table);
    assertThat(rows).hasSize(n);
    Set<String> ids = new HashSet<>();
    WKBReader wkb = new WKBReader();
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84);
    for (Record row : rows) {
      String id = (String) row.getField("id");
      ids.add(id);
      TelemetryGenerator.Record original = sent.get(id);
      assertThat(original).as("row %s was produced", id).isNotNull();
      Geometry committed = wkb.read(TestKit.bytes(row.getField("geometry")));
      Geometry expected =
          wkb.read(
              (byte[]) parser.parse(original.json(), 0).row().getField(TelemetryTable.GEOMETRY));
      assertThat(committed.equalsExact(expected)).as("geometry of %s round-trips", id).isTrue();
      assertThat(committed.getGeometryType()).isEqualTo(original.polygon() ? "Polygon" : "Point");
      if (!original.polygon()) {
        assertThat(committed.getCoordinate().x)
            .isCloseTo(original.x(), org.assertj.core.data.Offset.offset(1e-6));
        assertThat(committed.getCoordinate().y)
            .isCloseTo(original.y(), org.assertj.core.data.Offset.offset(1e-6));
      }
    }
    assertThat(ids).hasSize(n);
    int snapshots = 0;
    long summaryRows = 0;
    for (Snapshot s : table.snapshots()) {
      snapshots++;
      summaryRows += Long.parseLong(s.summary().get(SnapshotSummaryKeys.ROWS));
    }
    assertThat(summaryRows).as("snapshot summaries account for every row once").isEqualTo(n);
    assertThat(snapshots).isGreaterThan(1);
  }

  @Test
  void aJdbcCatalogOnASqliteFileWorksTheSameWay(@TempDir Path dir) throws Exception {
    String topic = "e2e-jdbc";
    kafka.createTopic(topic, 2);
    Map<String, TelemetryGenerator.Record> sent =
        TestKit.produce(
            kafka.bootstrapServers(), topic, new TelemetryGenerator(8, 10, 100, 500), 2_000);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of(
                "catalog.type", "jdbc",
                "catalog.uri", "jdbc:sqlite:" + dir.resolve("catalog.db"),
                "sink.max-latency", "1s"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("e2e-jdbc");

    assertThat(java.nio.file.Files.size(dir.resolve("catalog.db"))).isGreaterThan(0);
    assertThat(TestKit.distinctIds(TestKit.rows(TestKit.table(config)))).isEqualTo(sent.keySet());
  }
}
