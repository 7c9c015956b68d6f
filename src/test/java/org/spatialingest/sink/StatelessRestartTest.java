package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptionsInternal;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * A stateless restart that reuses the job id (as application mode with a fixed job id does after
 * its HA data is gone) starts checkpoint ids at 1 again. Iceberg's own sink then skips commits it
 * believes it made (apache/iceberg#18098); this sink keys commits by content, so nothing is
 * skipped.
 */
class StatelessRestartTest {
  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void aRestartWithoutStateButTheSameJobIdCommitsItsNewData(@TempDir Path dir) throws Exception {
    String topic = "stateless";
    kafka.createTopic(topic, 2);
    TelemetryGenerator gen = new TelemetryGenerator(31, 8, 200, 500);
    Map<String, TelemetryGenerator.Record> sent =
        // enough that the first run spans several checkpoints (C = 300 ms), so the second run's ids
        // (from 1 again) overlap them even when its first checkpoint comes before its first rows
        new HashMap<>(TestKit.produce(kafka.bootstrapServers(), topic, gen, 20_000));
    JobConfig config =
        TestKit.config(kafka.bootstrapServers(), topic, dir, Map.of("sink.max-latency", "1s"));
    JobID fixed = JobID.generate();

    JobID first = runOnFreshCluster(config, fixed);
    assertThat(TestKit.rows(TestKit.table(config))).hasSize(20_000);

    // no state to resume from, so the new data comes on its own topic (a stateless restart can't be
    // exactly-once
    // with respect to Kafka offsets; what matters here is that its commits are not skipped)
    String topic2 = "stateless-2";
    kafka.createTopic(topic2, 2);
    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic2, gen, 1_000));
    JobID second = runOnFreshCluster(config.with(Map.of("kafka.topic", topic2)), fixed);

    assertThat(first).isEqualTo(fixed);
    assertThat(second).isEqualTo(fixed);
    Table table = TestKit.table(config);
    assertThat(TestKit.distinctIds(TestKit.rows(table))).isEqualTo(sent.keySet());
    long firstRunMax = 0;
    long secondRunMin = Long.MAX_VALUE;
    String firstLineage = null;
    for (Snapshot s : table.snapshots()) {
      assertThat(s.summary().get(SnapshotSummaryKeys.FLINK_JOB_ID)).isEqualTo(fixed.toHexString());
      long checkpoint = Long.parseLong(s.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID));
      String lineage = s.summary().get(SnapshotSummaryKeys.LINEAGE);
      firstLineage = firstLineage == null ? lineage : firstLineage;
      if (lineage.equals(firstLineage)) {
        firstRunMax = Math.max(firstRunMax, checkpoint);
      } else {
        secondRunMin = Math.min(secondRunMin, checkpoint);
      }
    }
    assertThat(secondRunMin)
        .as("the second run committed at a checkpoint id the first run had already committed")
        .isLessThanOrEqualTo(firstRunMax);
  }

  private static JobID runOnFreshCluster(JobConfig config, JobID jobId) throws Exception {
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(4)
                .build());
    cluster.start();
    TestStreamEnvironment.setAsContext(cluster, 2);
    try {
      Configuration conf = new Configuration();
      conf.set(PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID, jobId.toHexString());
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
      SpatialIngestJob.build(env, config, true);
      JobExecutionResult result = env.execute("stateless");
      return result.getJobID();
    } finally {
      TestStreamEnvironment.unsetAsContext();
      cluster.close();
    }
  }
}
