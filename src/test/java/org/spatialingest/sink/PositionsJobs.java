package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * The jobs, topics and look-ups of the positions tests ({@link PositionsIdentityTest}, {@link
 * PositionsResumeTest}): one class's broker, its topics, bounded and unbounded runs at parallelism
 * 2 into a Hadoop catalog, and what the table's summaries and Kafka's admin say. Two classes, so
 * the suite's JVMs can run them side by side (together they took 182 s in one JVM).
 */
final class PositionsJobs {
  private final KafkaBroker kafka;
  private final String prefix;
  private final AtomicInteger topics = new AtomicInteger();

  /** Topics of {@code kafka} named {@code <prefix><n>}. */
  PositionsJobs(KafkaBroker kafka, String prefix) {
    this.kafka = kafka;
    this.prefix = prefix;
  }

  String topic(int partitions) throws Exception {
    String topic = prefix + topics.incrementAndGet();
    kafka.createTopic(topic, partitions);
    return topic;
  }

  void recreate(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      admin.deleteTopics(List.of(topic)).all().get();
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      try {
        kafka.createTopic(topic, partitions);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)
            || System.currentTimeMillis() > deadline) {
          throw e;
        }
        Thread.sleep(200); // the deletion is still under way
      }
    }
  }

  void deleteBefore(String topic, long offset) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      admin
          .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(offset)))
          .all()
          .get();
    }
  }

  JobConfig config(String topic, Path dir, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("kafka.starting-offsets", "table");
    m.putIfAbsent("sink.max-latency", "1s");
    m.putIfAbsent("sink.memory-budget", "64MB");
    return TestKit.config(kafka.bootstrapServers(), topic, dir.resolve("warehouse"), m);
  }

  static List<String> summaries(Table table, String key) {
    table.refresh();
    return java.util.stream.StreamSupport.stream(table.snapshots().spliterator(), false)
        .map(Snapshot::summary)
        .filter(s -> s.containsKey(key))
        .map(s -> s.get(key))
        .collect(Collectors.toList());
  }

  static void awaitRows(Table table, int rows) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (TestKit.rows(table).size() < rows && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
    assertThat(TestKit.rows(table)).hasSize(rows);
  }

  static String trace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }

  static String topicId(String bootstrap, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      return admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get()
          .get(topic)
          .topicId()
          .toString();
    }
  }

  static String clusterId(String bootstrap) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      return admin.describeCluster().clusterId().get();
    }
  }

  /** A bounded run without restarts, to its end. */
  static void runToEnd(JobConfig config) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.executeAsync("positions").getJobExecutionResult().get();
  }

  /** An unbounded run (from {@code savepoint} if not null) with Flink's default restarts. */
  static JobClient start(JobConfig config, String savepoint, Configuration conf) throws Exception {
    return build(config, savepoint, conf).executeAsync("positions-unbounded");
  }

  /** The unbounded job of {@link #start}, built (its start decided) but not run yet. */
  static StreamExecutionEnvironment build(JobConfig config, String savepoint, Configuration conf) {
    return build(config, savepoint, conf, 2);
  }

  /** The same at {@code parallelism}. */
  static StreamExecutionEnvironment build(
      JobConfig config, String savepoint, Configuration conf, int parallelism) {
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    SpatialIngestJob.build(env, config, false);
    return env;
  }
}
