package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;

/**
 * Stop with a savepoint while rows are only buffered (not in any file), start again from it with
 * new input: every row is committed once. Also shows that checkpoints complete without closing
 * files.
 */
class RestartTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void bufferedRowsSurviveAStopWithSavepointAndNothingIsDuplicated(@TempDir Path dir)
      throws Exception {
    String topic = "restart";
    kafka.createTopic(topic, 2);
    TelemetryGenerator generator = new TelemetryGenerator(11, 10, 400, 1_000);
    Map<String, TelemetryGenerator.Record> sent =
        new HashMap<>(TestKit.produce(kafka.bootstrapServers(), topic, generator, 2_000));

    // Run 1: bounds that never bind, so rows can only live in the writers' checkpointed state.
    JobConfig holding =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.target-file-size",
                "1GB",
                "sink.memory-budget",
                "256MB"));
    StreamExecutionEnvironment env1 = StreamExecutionEnvironment.getExecutionEnvironment();
    env1.setParallelism(2);
    SpatialIngestJob.build(env1, holding, false);
    JobClient run1 = env1.executeAsync("restart-1");
    Table table = TestKit.table(holding);
    TestKit.awaitStagedRows(table, 2_000);
    table.refresh();
    assertThat(table.currentSnapshot())
        .as("checkpoints completed without closing any file")
        .isNull();
    assertThat(groupOffsets(holding.groupId()))
        .as("the group's lag says nothing is in the table yet")
        .isZero();
    String savepoint =
        run1.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(60, TimeUnit.SECONDS);
    table.refresh();
    assertThat(table.currentSnapshot()).as("the savepoint closed no file either").isNull();

    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, generator, 1_000));

    // Run 2 from the savepoint, with a freshness bound that closes files quickly.
    JobConfig fresh = holding.with(Map.of("sink.max-latency", "1s"));
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    StreamExecutionEnvironment env2 = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env2.setParallelism(2);
    SpatialIngestJob.build(env2, fresh, false);
    JobClient run2 = env2.executeAsync("restart-2");
    List<Record> rows = List.of();
    long deadline = System.currentTimeMillis() + 90_000;
    while (System.currentTimeMillis() < deadline) {
      rows = TestKit.rows(table);
      if (rows.size() >= sent.size()) {
        break;
      }
      Thread.sleep(500);
    }
    Thread.sleep(2_000); // a late duplicate would show up in the next commits
    rows = TestKit.rows(table);
    TestKit.cancelAndWait(run2);

    Set<String> ids = new HashSet<>();
    for (Record r : rows) {
      ids.add((String) r.getField("id"));
    }
    assertThat(rows).hasSize(3_000);
    assertThat(ids).isEqualTo(sent.keySet());
    assertThat(groupOffsets(holding.groupId()))
        .as("the group's offsets are the table's positions")
        .isEqualTo(3_000);
  }

  private static long groupOffsets(String group) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      Map<?, OffsetAndMetadata> offsets =
          admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      return offsets.values().stream().mapToLong(o -> o == null ? 0 : o.offset()).sum();
    }
  }
}
