package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The bounded sink's contract on a real broker, MiniCluster and Iceberg catalog: sizes, cadence,
 * exactly-once.
 */
class BoundedSinkTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final AtomicInteger TOPICS = new AtomicInteger();

  @AfterEach
  void removeFaults() {
    SinkFaults.install(null);
    Slow.FAILED.set(false);
    Slow.failWhen = null;
  }

  // ---- exactly-once through failures at each sink step ----

  /**
   * One run fails once at the first run of each of the five sink steps (a restart after each): the
   * five used to be five runs of their own, each paying a start, a produce and a read-back (26 s
   * against this run's 18 s, one after the other); the table must still hold every record once and
   * no orphan.
   */
  @Test
  void aFailureAtEachSinkStepLosesAndDuplicatesNothing(@TempDir Path dir) throws Exception {
    String topic = topic();
    // 3,000 records (60 of them 2,000-vertex polygons, ~2 MB of coordinates) fill M = 150 KB many
    // times before and after the failures, each of which comes at its step's first run. L = 1 h:
    // with L = 1 s the backlog (produced before the job, so already older than L) closed every
    // buffer at every barrier (C = 0.3 s), and on a slow machine no writer ever held 150 KB between
    // two barriers, so the memory step never ran (CI of 3a2d191 on a fresh clone)
    Map<String, TelemetryGenerator.Record> sent =
        TestKit.produce(
            kafka.bootstrapServers(), topic, new TelemetryGenerator(3, 10, 50, 2_000), 3_000);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.memory-budget",
                "150KB",
                "sink.target-file-size",
                "64MB"));
    Set<SinkFaults.Point> steps =
        EnumSet.of(
            SinkFaults.Point.AFTER_MEMORY_FLUSH,
            SinkFaults.Point.AFTER_FILE_WRITTEN,
            SinkFaults.Point.AFTER_STAGING,
            SinkFaults.Point.BEFORE_COMMIT,
            SinkFaults.Point.AFTER_COMMIT);
    Set<SinkFaults.Point> injected = ConcurrentHashMap.newKeySet();
    SinkFaults.install(
        p -> {
          if (steps.contains(p) && injected.add(p)) {
            throw new IllegalStateException("injected failure at " + p);
          }
        });
    runBounded(config, 300_000, steps.size() + 3);

    assertThat(injected).as("a failure at each step happened").isEqualTo(steps);
    TestKit.assertNoOrphans(assertExactly(config, sent));
  }

  // ---- end of input: writers that finish at different checkpoints ----

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void writersFinishingAtDifferentCheckpointsCommitEverything(
      boolean failBetween, @TempDir Path dir) throws Exception {
    String topic = topic();
    TelemetryGenerator gen = new TelemetryGenerator(5, 10, 0, 0);
    Map<String, TelemetryGenerator.Record> sent = new HashMap<>();
    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 150, 0));
    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 2_500, 1));
    // without an exchange each writer finishes with its own source subtask (with one, all finish
    // together)
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            Map.of("sink.max-latency", "1h", "sink.distribution", "none"));
    AtomicInteger finishedWriters = new AtomicInteger();
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_END_OF_INPUT) {
            finishedWriters.incrementAndGet();
          }
        });
    if (failBetween) {
      Slow.failWhen = () -> finishedWriters.get() == 1;
    }
    runBounded(config, 1_000_000);

    assertThat(finishedWriters.get()).isGreaterThanOrEqualTo(2);
    assertThat(Slow.FAILED.get()).isEqualTo(failBetween);
    Table table = assertExactly(config, sent);
    long endOfInputFiles = 0;
    for (Snapshot s : table.snapshots()) {
      endOfInputFiles +=
          Long.parseLong(
              s.summary().getOrDefault(SnapshotSummaryKeys.CLOSED_PREFIX + "end_of_input", "0"));
    }
    assertThat(endOfInputFiles)
        .as("with L = 1h only end of input closes files: one per writer")
        .isGreaterThanOrEqualTo(2);
  }

  // ---- T: committed files land near the target size ----

  @Test
  void filesLandNearTheTargetSize(@TempDir Path dir) throws Exception {
    String topic = topic();
    Map<String, TelemetryGenerator.Record> sent =
        TestKit.produce(
            kafka.bootstrapServers(), topic, new TelemetryGenerator(9, 30, 50, 3_000), 5_000);
    // T = 512 KB over ~5 MB of geometry: several files, as T = 2 MB over 20,000 records gave, in
    // half the time (47 s vs 90 s back to back: parsing and encoding 3,000-vertex polygons)
    long target = 512_000;
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.memory-budget",
                "64MB",
                "sink.target-file-size",
                Long.toString(target)));
    runBounded(config, 0);

    Table table = assertExactly(config, sent);
    List<Long> sizes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        sizes.add(t.file().fileSizeInBytes());
      }
    }
    sizes.sort(null);
    long median = sizes.get(sizes.size() / 2);
    assertThat(sizes.size()).as("several files: %s", sizes).isGreaterThanOrEqualTo(5);
    assertThat(median).as("median of %s", sizes).isBetween(target / 2, target * 2);
    assertThat(closedBy(table, "bytes")).isGreaterThan(0);
  }

  // ---- C vs L: commits follow L, not C ----

  @Test
  void commitsFollowTheFreshnessBoundNotTheCheckpointInterval(@TempDir Path dir) throws Exception {
    String topic = topic();
    long latencyMs = 6_000;
    long checkpointMs = 1_000;
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            Map.of(
                "checkpoint.interval",
                checkpointMs + "ms",
                "sink.max-latency",
                latencyMs + "ms",
                "sink.target-file-size",
                "1GB",
                "sink.memory-budget",
                "256MB"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    JobClient job = env.executeAsync("cadence");
    TelemetryGenerator gen = new TelemetryGenerator(17, 10, 0, 0);
    Map<String, TelemetryGenerator.Record> sent = new HashMap<>();
    long start = System.currentTimeMillis();
    while (System.currentTimeMillis() - start
        < 24_000) { // steady input for 24 s (4 L): 40 records every 400 ms
      sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 40));
      Thread.sleep(400);
    }
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 30_000;
    while (TestKit.rows(table).size() < sent.size() && System.currentTimeMillis() < deadline) {
      Thread.sleep(500);
    }
    TestKit.cancelAndWait(job);

    assertExactly(config, sent);
    List<Snapshot> commits = new ArrayList<>();
    table.snapshots().forEach(commits::add);
    long checkpoints =
        Long.parseLong(
            commits.get(commits.size() - 1).summary().get(SnapshotSummaryKeys.CHECKPOINT_ID));
    assertThat(commits.size())
        .as("about one commit per L over %d checkpoints", checkpoints)
        .isBetween(3, 8);
    assertThat(checkpoints).isGreaterThanOrEqualTo(18);
    for (Snapshot s : commits) {
      int files = Integer.parseInt(s.summary().get(SnapshotSummaryKeys.FILES));
      assertThat(files).as("one file per writer and partition").isLessThanOrEqualTo(2 * 2);
      long oldestAge =
          s.timestampMillis() - Long.parseLong(s.summary().get(SnapshotSummaryKeys.MIN_INGEST_MS));
      assertThat(oldestAge)
          .as("oldest row's age at commit")
          .isLessThanOrEqualTo(latencyMs + checkpointMs);
    }
  }

  // ---- restarts that hurt Iceberg's own sink ----

  @Test
  void restoreFromAnOlderSavepointLosesAndDuplicatesNothing(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    String topic = topic();
    TelemetryGenerator gen = new TelemetryGenerator(23, 10, 100, 500);
    Map<String, TelemetryGenerator.Record> sent =
        new HashMap<>(TestKit.produce(kafka.bootstrapServers(), topic, gen, 1_000));
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(), topic, dir.resolve("wh"), Map.of("sink.max-latency", "1s"));
    Table table = null;

    StreamExecutionEnvironment env1 = StreamExecutionEnvironment.getExecutionEnvironment();
    env1.setParallelism(2);
    SpatialIngestJob.build(env1, config, false);
    JobClient run1 = env1.executeAsync("older-savepoint-1");
    table = awaitRows(config, 1_000);
    String savepoint =
        run1.triggerSavepoint(dir.resolve("sp").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(60, TimeUnit.SECONDS);
    sent.putAll(
        TestKit.produce(
            kafka.bootstrapServers(), topic, gen, 1_000)); // committed after the savepoint
    awaitRows(config, 2_000);
    TestKit.cancelAndWait(run1);

    sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 500));
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    StreamExecutionEnvironment env2 = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env2.setParallelism(2);
    SpatialIngestJob.build(env2, config, false);
    JobClient run2 = env2.executeAsync("older-savepoint-2");
    awaitRows(config, 2_500);
    // anything committed twice would land within a few more commits: L = 1 s closes a row at the
    // barrier after it is 0.7 s old, and C = 300 ms
    JobCheckpoints.awaitMore(flink, run2.getJobID(), 6);
    TestKit.cancelAndWait(run2);

    assertExactly(config, sent);
    boolean reverted = false;
    table.refresh();
    for (Snapshot s : table.snapshots()) {
      reverted |= s.summary().containsKey(SnapshotSummaryKeys.REVERTED_BATCHES);
    }
    assertThat(reverted).as("the batches committed after the savepoint were reconciled").isTrue();
  }

  // ---- helpers ----

  private static String topic() throws Exception {
    String topic = "sink-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 2);
    return topic;
  }

  /**
   * Runs the job over what the topic holds now; {@code parkNanos} slows each record so checkpoints
   * interleave.
   */
  private static void runBounded(JobConfig config, long parkNanos) throws Exception {
    runBounded(config, parkNanos, 3);
  }

  /**
   * As {@link #runBounded(JobConfig, long)}, restarting a failed job up to {@code restarts} times.
   */
  private static void runBounded(JobConfig config, long parkNanos, int restarts) throws Exception {
    Configuration conf = TestKit.fixedDelayRestarts(restarts);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.configureCheckpointing(env, config);
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, true, SpatialIngestJob.decideStart(env, config));
    if (parkNanos > 0) {
      records = records.map(new Slow(parkNanos)).name("slow");
    }
    SpatialIngestJob.sink(SpatialIngestJob.transform(records, config), config);
    env.execute("bounded");
  }

  private static Table awaitRows(JobConfig config, int expected) throws Exception {
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      if (TestKit.rows(table).size() >= expected) {
        return table;
      }
      Thread.sleep(300);
    }
    throw new AssertionError("fewer than " + expected + " rows committed in time");
  }

  private static Table assertExactly(JobConfig config, Map<String, TelemetryGenerator.Record> sent)
      throws Exception {
    Table table = TestKit.table(config);
    List<Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(sent.keySet());
    assertThat(rows).hasSize(sent.size());
    return table;
  }

  private static long closedBy(Table table, String reason) {
    long n = 0;
    for (Snapshot s : table.snapshots()) {
      n +=
          Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.CLOSED_PREFIX + reason, "0"));
    }
    return n;
  }

  /** Slows records down; optionally fails once when a condition holds. */
  static final class Slow implements MapFunction<SourceRecord, SourceRecord> {
    static final AtomicBoolean FAILED = new AtomicBoolean();
    static volatile java.util.function.BooleanSupplier failWhen;
    private final long parkNanos;

    Slow(long parkNanos) {
      this.parkNanos = parkNanos;
    }

    @Override
    public SourceRecord map(SourceRecord value) {
      LockSupport.parkNanos(parkNanos);
      java.util.function.BooleanSupplier condition = failWhen;
      if (condition != null && condition.getAsBoolean() && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException(
            "injected failure between the first and the last writer finishing");
      }
      return value;
    }
  }
}
