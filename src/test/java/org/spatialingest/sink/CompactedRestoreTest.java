package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
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
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TableMaintenance;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;

/**
 * Restoring a savepoint older than commits that a compaction has since rewritten: the rows of those
 * commits can no longer be removed file by file, so the job must stop before changing anything (a
 * replay would duplicate them), say how to get out, and the documented way out — a start without
 * state — must then commit every record exactly once. On a JDBC (SQLite) catalog, with Iceberg's
 * own {@code rewriteDataFiles}.
 */
class CompactedRestoreTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void anOlderSavepointAfterCompactionStopsCleanlyAndAStartWithoutStateRecovers(@TempDir Path dir)
      throws Exception {
    String topic = "compacted-restore";
    kafka.createTopic(topic, 2);
    TelemetryGenerator gen = new TelemetryGenerator(41, 10, 100, 300);
    Map<String, TelemetryGenerator.Record> sent =
        new HashMap<>(TestKit.produce(kafka.bootstrapServers(), topic, gen, 1_000));
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of(
                "catalog.type", "jdbc",
                "catalog.uri", "jdbc:sqlite:" + dir.resolve("catalog.db"),
                "kafka.starting-offsets", "table",
                "sink.max-latency", "1s"));

    JobClient run1 = start(config, null);
    awaitRows(config, 1_000);
    String savepoint =
        run1.triggerSavepoint(dir.resolve("sp").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(60, TimeUnit.SECONDS);
    sent.putAll(
        TestKit.produce(
            kafka.bootstrapServers(), topic, gen, 1_000)); // committed after the savepoint
    awaitRows(config, 2_000);
    TestKit.cancelAndWait(run1);
    Table table = TestKit.table(config);
    int rewritten =
        TableMaintenance.rewriteDataFiles(
            StreamExecutionEnvironment.getExecutionEnvironment(), table);
    assertThat(rewritten).as("the compaction rewrote the sink's files").isGreaterThan(1);
    table.refresh();
    long beforeRestore = table.currentSnapshot().snapshotId();

    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 500));
    JobClient run2 = start(config, savepoint);
    ExecutionException stopped =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class,
            () -> run2.getJobExecutionResult().get(120, TimeUnit.SECONDS));
    assertThat(causes(stopped))
        .as("why the restore stopped")
        .contains("table maintenance rewrote")
        .contains("start the job without state");
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId())
        .as("the stopped restore changed nothing")
        .isEqualTo(beforeRestore);

    // the documented way out
    JobClient run3 = start(config, null);
    awaitRows(config, 2_500);
    Thread.sleep(3_000); // anything committed twice would land within a few more commits
    TestKit.cancelAndWait(run3);
    List<Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(sent.keySet());
    assertThat(rows).hasSize(sent.size());
    TestKit.assertNoOrphans(table);
  }

  private static JobClient start(JobConfig config, String savepoint) throws Exception {
    Configuration conf = new Configuration();
    // a restore that must stop has to stop: a restart strategy would otherwise retry it
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 100);
    conf.set(
        RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY,
        java.time.Duration.ofMillis(200));
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    return env.executeAsync("compacted-restore");
  }

  private static void awaitRows(JobConfig config, int expected) throws Exception {
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 90_000;
    while (System.currentTimeMillis() < deadline) {
      if (TestKit.rows(table).size() >= expected) {
        return;
      }
      Thread.sleep(300);
    }
    throw new AssertionError("fewer than " + expected + " rows committed in time");
  }

  private static String causes(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.append(c).append('\n');
    }
    return all.toString();
  }
}
