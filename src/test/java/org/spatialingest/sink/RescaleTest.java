package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * What the operator's autoscaler does: stop with a savepoint at parallelism 2 while rows wait in
 * staging runs, restore at 3, stop again, restore at 1. The restored writers get other writers'
 * runs; nothing is lost or duplicated, and no staging run or data file is left behind.
 */
class RescaleTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(6);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void stagedRowsSurviveRescalingFromTwoToThreeToOne(@TempDir Path dir) throws Exception {
    String topic = "rescale";
    kafka.createTopic(topic, 3);
    Map<String, String> keys =
        new HashMap<>(
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.target-file-size",
                "1GB",
                "kafka.starting-offsets",
                "table"));
    JobConfig holding =
        TestKit.config(kafka.bootstrapServers(), topic, dir.resolve("warehouse"), keys);
    Table table = null;

    MixedInput input = MixedInput.of("a", 2_000, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, input.values());
    JobClient run = start(holding, 2, null);
    table = TestKit.table(holding);
    TestKit.awaitStagedRows(table, input.rows().size());
    String first = savepoint(run, dir);
    assertThat(TestKit.rows(table)).as("rows are still only in staging runs").isEmpty();

    MixedInput more = MixedInput.of("b", 1_000, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, more.values());
    input = input.plus(more);
    run = start(holding, 3, first);
    TestKit.awaitStagedRows(table, input.rows().size());
    String second = savepoint(run, dir);
    assertThat(TestKit.rows(table)).isEmpty();

    MixedInput last = MixedInput.of("c", 500, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, last.values());
    input = input.plus(last);
    run = start(holding.with(Map.of("sink.max-latency", "1s")), 1, second);
    long deadline = System.currentTimeMillis() + 90_000;
    while (TestKit.rows(table).size() < input.rows().size()
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(300);
    }
    Thread.sleep(2_000); // a late duplicate would show up in the next commits
    TestKit.cancelAndWait(run);
    ResumeWithoutStateTest.assertExactly(holding, input);
  }

  private static JobClient start(JobConfig config, int parallelism, String savepoint)
      throws Exception {
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    SpatialIngestJob.build(env, config, false);
    return env.executeAsync("rescale-" + parallelism);
  }

  private static String savepoint(JobClient run, Path dir) throws Exception {
    return run.stopWithSavepoint(
            false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
        .get(120, TimeUnit.SECONDS);
  }
}
