package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TablePositions;
import org.spatialingest.table.TelemetryTable;

/**
 * Every way to start a job without its Flink state — {@code flink cancel} then {@code flink run}, a
 * crash between the Iceberg commit and the checkpoint notification, another parallelism, a re-run
 * of the same files — resumes from the positions the table records and skips what is committed
 * above them: 0 rows lost, 0 duplicated, in the telemetry table and in the rejects table; also when
 * an older release wrote the table's positions (format 1 of {@link TablePositions}). Real broker,
 * MiniCluster and Iceberg catalog.
 */
class ResumeWithoutStateTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(6);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final AtomicInteger TOPICS = new AtomicInteger();

  @AfterEach
  void removeFaults() {
    SinkFaults.install(null);
  }

  /**
   * The scenario users hit: rows buffered across checkpoints, cancel without savepoint, run again.
   */
  @Test
  void cancelWhileRowsAreBufferedThenRunAgainAtAnotherParallelism(@TempDir Path dir)
      throws Exception {
    String topic = "resume-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 2);
    MixedInput input = MixedInput.of(2_000, 40, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, input.values());
    JobConfig holding =
        config(topic, dir, Map.of("sink.max-latency", "1h", "sink.target-file-size", "1GB"));

    JobClient run1 = start(holding, 2, false);
    TestKit.awaitStagedRows(TestKit.table(holding), input.rows().size());
    TestKit.cancelAndWait(run1);
    assertThat(TestKit.rows(TestKit.table(holding)))
        .as("nothing was committed before the cancel")
        .isEmpty();

    runToEnd(holding.with(Map.of("sink.max-latency", "1s")), 3);
    assertExactly(holding, input);
  }

  /**
   * A closed file of one time partition commits records above the position while an older
   * partition's rows still wait in a buffer: the restart must re-read the waiting ones and skip the
   * committed ones.
   */
  @Test
  void recordsCommittedAboveThePositionAreSkipped(@TempDir Path dir) throws Exception {
    String topic = "resume-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 2);
    // every 40th record belongs to a day three days ago: its buffer stays small and open (L = 1 h)
    // while today's
    // buffer reaches T again and again
    MixedInput input = MixedInput.of(4_000, 40, 40);
    TestKit.produceValues(kafka.bootstrapServers(), topic, input.values());
    JobConfig config =
        config(topic, dir, Map.of("sink.max-latency", "1h", "sink.target-file-size", "48KB"));

    JobClient run1 = start(config, 2, false);
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 90_000;
    while (!committedAbovePosition(table) && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
    TestKit.cancelAndWait(run1);
    assertThat(committedAbovePosition(table))
        .as("rows above a recorded position were committed before the cancel")
        .isTrue();

    runToEnd(config.with(Map.of("sink.max-latency", "1s")), 2);
    assertExactly(config, input);
  }

  /**
   * The job commits to Iceberg and dies before Flink learns of it; then it is started again without
   * state.
   */
  @Test
  void crashAfterTheIcebergCommitThenStartWithoutState(@TempDir Path dir) throws Exception {
    String topic = "resume-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 2);
    MixedInput input = MixedInput.of(3_000, 40, 25);
    TestKit.produceValues(kafka.bootstrapServers(), topic, input.values());
    JobConfig config = config(topic, dir, Map.of("sink.max-latency", "1s"));
    runUntilCrashAfterCommit(config, 2);
    assertThat(TestKit.rows(TestKit.table(config)))
        .as("the crash came after some commits")
        .isNotEmpty();

    runToEnd(config, 2);
    assertExactly(config, input);
  }

  /**
   * A bounded file run that died between the rejects commit and the telemetry commit, run again,
   * then repeated: each line committed exactly once.
   */
  @Test
  void aFileSourceRunRepeatedCommitsNothingTwice(@TempDir Path dir) throws Exception {
    MixedInput input = MixedInput.of(3_000, 40, 30);
    Path file = dir.resolve("in").resolve("part-1.ndjson");
    Files.createDirectories(file.getParent());
    Files.write(
        file,
        String.join(
                "\n",
                input.values().stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList())
            .concat("\n") // a closed file: its last line ends
            .getBytes(StandardCharsets.UTF_8));
    JobConfig config =
        config(
            "unused",
            dir,
            Map.of(
                "source",
                "file:" + file.getParent(),
                "sink.max-latency",
                "1s",
                "sink.target-file-size",
                "32KB"));
    // the first commit of a batch with rejects is the rejects table's: the job dies before the
    // telemetry commit, so
    // the rejects of that batch are newer than the table's positions (a small file may finish in
    // one batch, so a
    // later commit number would not always be reached)
    runUntilCrashAfterCommit(config, 1);
    runToEnd(config, 2);
    assertExactly(config, input);
    Table table = TestKit.table(config);
    long snapshots = table.currentSnapshot().sequenceNumber();

    runToEnd(config, 1);
    assertExactly(config, input);
    table.refresh();
    assertThat(table.currentSnapshot().sequenceNumber())
        .as("the repeated run had nothing to commit")
        .isEqualTo(snapshots);
  }

  /**
   * A Kafka table whose newest positions an older release wrote (format 1, with a file key too): a
   * start without state begins every partition exactly there. The first half of the topic stands
   * for what that release committed, so the table must end with the second half only, once.
   */
  @Test
  void kafkaPositionsOfFormatOneAreResumedExactly(@TempDir Path dir) throws Exception {
    String topic = "resume-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 3);
    MixedInput committedBefore = MixedInput.of("a", 300, 40, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, committedBefore.values());
    Map<String, Long> formatOne = new TreeMap<>(endOffsets(topic, 3));
    formatOne.put(SourceKeys.file("/gone/part-1.ndjson"), 11L);
    MixedInput next = MixedInput.of("b", 300, 40, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, next.values());
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of("kafka.starting-offsets", "table", "sink.max-latency", "1s"));
    Table table = newTable(config);
    rewriteAsFormatOne(table, formatOne);

    runToEnd(config, 2);
    next.assertExactlyOnceIn(config);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(
            SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(TablePositions.FORMAT));
    Map<String, Long> expected = endOffsets(topic, 3);
    assertThat(TablePositions.read(table)).isEqualTo(expected);
  }

  private static Map<String, Long> endOffsets(String topic, int partitions) throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<String, Long> offsets = new HashMap<>();
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin
          .listOffsets(latest)
          .all()
          .get()
          .forEach(
              (tp, info) ->
                  offsets.put(SourceKeys.kafka(tp.topic(), tp.partition()), info.offset()));
    }
    return offsets;
  }

  /**
   * A file backfill whose table has format-1 positions (one entry per file), run again with one
   * more file: the files already read are skipped line by line, the new one is read, nothing twice.
   */
  @Test
  void fileBackfillOfFormatOneIsRerunExactly(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    MixedInput a = MixedInput.of("a", 800, 40, 30);
    MixedInput b = MixedInput.of("b", 800, 40, 30);
    MixedInput c = MixedInput.of("c", 800, 40, 30);
    write(in.resolve("part-a.ndjson"), a);
    write(in.resolve("part-b.ndjson"), b);
    JobConfig config =
        TestKit.config(
            "localhost:1",
            "unused",
            dir.resolve("warehouse"),
            Map.of("source", "file:" + in, "sink.max-latency", "1s"));
    runToEnd(config, 2);
    Table table = TestKit.table(config);
    // what an older release recorded: one entry per file, the line after its last record
    Map<String, Long> formatOne = new TreeMap<>();
    formatOne.put(SourceKeys.file(in.resolve("part-a.ndjson").toUri().toString()), 801L);
    formatOne.put(SourceKeys.file(in.resolve("part-b.ndjson").toUri().toString()), 801L);
    rewriteAsFormatOne(table, formatOne);
    long snapshots = table.currentSnapshot().sequenceNumber();

    runToEnd(config, 2);
    a.plus(b).assertExactlyOnceIn(config);
    table.refresh();
    assertThat(table.currentSnapshot().sequenceNumber())
        .as("a re-run of the same files commits nothing")
        .isEqualTo(snapshots);

    write(in.resolve("part-c.ndjson"), c);
    runToEnd(config, 1);
    a.plus(b).plus(c).assertExactlyOnceIn(config);
  }

  /** Commits an empty snapshot whose positions are in format 1, as releases before format 2. */
  private static void rewriteAsFormatOne(Table table, Map<String, Long> positions)
      throws Exception {
    table.refresh();
    table
        .newFastAppend()
        .set(
            SnapshotSummaryKeys.POSITIONS,
            new ObjectMapper().writeValueAsString(new TreeMap<>(positions)))
        .commit();
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .doesNotContainKey(SnapshotSummaryKeys.POSITIONS_FORMAT);
  }

  private static Table newTable(JobConfig config) {
    return TableBootstrap.ensureTable(
        Catalogs.catalogLoader(config).loadCatalog(),
        Catalogs.tableIdentifier(config),
        TelemetryTable.LAYOUT,
        config.partitioning());
  }

  private static void write(Path file, MixedInput input) throws Exception {
    List<String> lines =
        input.values().stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList();
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Runs the bounded job until the {@code nth} Iceberg commit succeeded, then crashes it before
   * Flink learns of the commit; with no restart strategy the job, and its state, are gone.
   */
  private static void runUntilCrashAfterCommit(JobConfig config, int nth) throws Exception {
    AtomicInteger commits = new AtomicInteger();
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_COMMIT && commits.incrementAndGet() == nth) {
            throw new IllegalStateException("injected crash after Iceberg commit " + nth);
          }
        });
    try {
      runToEnd(config, 2, true);
      throw new AssertionError("the job should have crashed after commit " + nth);
    } catch (java.util.concurrent.ExecutionException expected) {
      // the job failed
    } finally {
      SinkFaults.install(null);
    }
  }

  private static boolean committedAbovePosition(Table table) throws Exception {
    table.refresh();
    Map<String, Long> positions = TablePositions.read(table);
    for (Record r : TestKit.rows(table)) {
      Long position = positions.get((String) r.getField("source"));
      if (position != null && (Long) r.getField("source_offset") >= position) {
        return true;
      }
    }
    return false;
  }

  private static JobConfig config(String topic, Path dir, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("kafka.starting-offsets", "table");
    m.putIfAbsent("sink.memory-budget", "64MB");
    return TestKit.config(kafka.bootstrapServers(), topic, dir.resolve("warehouse"), m);
  }

  private static JobClient start(JobConfig config, int parallelism, boolean bounded)
      throws Exception {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(noRestarts());
    env.setParallelism(parallelism);
    SpatialIngestJob.build(env, config, bounded);
    return env.executeAsync("resume");
  }

  private static void runToEnd(JobConfig config, int parallelism) throws Exception {
    runToEnd(config, parallelism, true);
  }

  private static void runToEnd(JobConfig config, int parallelism, boolean bounded)
      throws Exception {
    JobClient job = start(config, parallelism, bounded);
    job.getJobExecutionResult().get();
  }

  private static Configuration noRestarts() {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    return conf;
  }

  static void assertExactly(JobConfig config, MixedInput input) throws Exception {
    input.assertExactlyOnceIn(config);
  }
}
