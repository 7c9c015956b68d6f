package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;
import org.spatialingest.tools.TableInspection;

/**
 * Positions that know their source (issue #34): a topic created again, another cluster, records
 * deleted from Kafka before they were committed (at start and at a restore), every starting mode
 * after a stop, positions beyond snapshot expiry, a rollback under a running job. Real broker(s),
 * MiniCluster and Hadoop catalog; bounded runs of a few hundred records.
 */
class PositionsIdentityTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);
  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final AtomicInteger TOPICS = new AtomicInteger();

  /**
   * Delete and create the topic again, more new records than the old positions: every new record is
   * committed once (none dropped below the old positions), the reset is in the summary.
   */
  @Test
  void aTopicCreatedAgainIsReadFromItsStart(@TempDir Path dir) throws Exception {
    String topic = topic(2);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 300, 0, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    a.assertExactlyOnceIn(config);
    String oldId = topicId(kafka.bootstrapServers(), topic);

    recreate(topic, 2);
    String newId = topicId(kafka.bootstrapServers(), topic);
    MixedInput b = MixedInput.of("b", 500, 0, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    runToEnd(config);
    a.plus(b).assertExactlyOnceIn(config);
    Table table = TestKit.table(config);
    assertThat(summaries(table, SnapshotSummaryKeys.POSITIONS_RESET))
        .singleElement()
        .asString()
        .contains(topic, oldId, newId);

    runToEnd(config); // a later start: the new topic's positions apply, nothing read twice
    a.plus(b).assertExactlyOnceIn(config);
  }

  /**
   * The topic deleted and created again while an unbounded job runs, with fewer new records than
   * the reader's offset (out of range: not told as a retention gap) and with more (the reader would
   * skip the new records below it): the job stops once, naming the topic and both ids, with nothing
   * of the new topic committed; a start without state then commits every record of both topics
   * once.
   */
  @ParameterizedTest
  @ValueSource(ints = {100, 500})
  void aTopicCreatedAgainWhileTheJobRunsStopsIt(int newRecords, @TempDir Path dir)
      throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 300, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    // with more records: the consumer's metadata refreshes wait 8 s, so it mostly meets the new
    // topic with its records already in and reads on from offset 300 (the guard's ERROR says "found
    // before checkpoint <n>"); under heavy load it can still meet it empty, out of range ("found
    // when the reader failed"). Either must stop the job; aRestoreAfter... takes the first path
    // always, the case with 100 records the second
    JobConfig running =
        newRecords > a.rows().size()
            ? config.with(
                Map.of(
                    "kafka.properties.retry.backoff.ms", "8000",
                    "kafka.properties.retry.backoff.max.ms", "8000"))
            : config;
    JobClient run = start(running, null, new Configuration());
    Table table = TestKit.table(config);
    awaitRows(table, a.rows().size());
    String oldId = topicId(kafka.bootstrapServers(), topic);

    MixedInput b = MixedInput.of("b", newRecords, 0, 0);
    recreate(topic, 1);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    String newId = topicId(kafka.bootstrapServers(), topic);
    assertStopsAsCreatedAgain(run, table, topic, oldId, newId);
    assertThat(TestKit.distinctIds(TestKit.rows(table))).isEqualTo(a.rows());

    runToEnd(config);
    a.plus(b).assertExactlyOnceIn(config);
    assertThat(summaries(TestKit.table(config), SnapshotSummaryKeys.POSITIONS_RESET))
        .singleElement()
        .asString()
        .contains(topic, oldId, newId);
  }

  /**
   * A savepoint, the topic created again, a restore: a restore built after the re-creation is
   * refused where the job is built ({@link org.spatialingest.source.StartCheck}); one built before
   * it (the state's offsets of the old topic, as after Flink's own restart from a checkpoint) stops
   * at its first checkpoint with the same message, nothing of the new topic committed. A start
   * without state then commits every record of both topics once.
   */
  @Test
  void aRestoreAfterTheTopicWasCreatedAgainStops(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 300, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    Table table = TestKit.table(config);
    awaitRows(table, a.rows().size());
    String savepoint =
        run.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(120, TimeUnit.SECONDS);
    String oldId = topicId(kafka.bootstrapServers(), topic);
    StreamExecutionEnvironment builtBefore = build(config, savepoint, new Configuration());

    recreate(topic, 1);
    String newId = topicId(kafka.bootstrapServers(), topic);
    MixedInput b = MixedInput.of("b", 500, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    assertThatThrownBy(() -> start(config, savepoint, new Configuration()))
        .isInstanceOf(PositionsRefusedException.class)
        .hasMessageContaining("Refusing to restore: topic " + topic)
        .hasMessageContaining(oldId + " -> " + newId)
        .hasMessageContaining("without state");
    assertStopsAsCreatedAgain(
        builtBefore.executeAsync("restored-before-re-creation"), table, topic, oldId, newId);
    assertThat(TestKit.distinctIds(TestKit.rows(table))).isEqualTo(a.rows());

    runToEnd(config);
    a.plus(b).assertExactlyOnceIn(config);
  }

  /**
   * A savepoint before the first commit (the table has no position that could tell), the topic
   * created again, a restore: the ids kept with the source's offsets in the savepoint ({@link
   * org.spatialingest.source.ResumeFilter}) refuse it, nothing of the new topic committed. A start
   * without state then commits every record of the new topic once. The same without skipping
   * (re-appending is asked for on a start without state, not on a restore).
   */
  @ParameterizedTest(name = "source.skip-committed: {0}")
  @ValueSource(booleans = {true, false})
  void aRestoreBeforeTheFirstCommitAfterTheTopicWasCreatedAgainIsRefused(
      boolean skipCommitted, @TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config =
        config(
            topic,
            dir,
            Map.of(
                "sink.max-latency",
                "5min",
                "source.skip-committed",
                Boolean.toString(skipCommitted)));
    MixedInput a = MixedInput.of("a", 300, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    Table table = TestKit.table(config);
    TestKit.awaitStagedRows(table, a.rows().size());
    String savepoint =
        run.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(120, TimeUnit.SECONDS);
    assertThat(TestKit.rows(table)).as("committed before the savepoint").isEmpty();
    String oldId = topicId(kafka.bootstrapServers(), topic);

    recreate(topic, 1);
    String newId = topicId(kafka.bootstrapServers(), topic);
    MixedInput b = MixedInput.of("b", 500, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    var restored = start(config, savepoint, new Configuration()).getJobExecutionResult();
    assertThatThrownBy(() -> restored.get(120, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .satisfies(
            e ->
                assertThat(trace(e))
                    .contains("Refusing to restore: topic " + topic)
                    .contains(oldId + " -> " + newId)
                    .contains("without state"));
    assertThat(TestKit.rows(table)).as("committed by the refused restore").isEmpty();

    runToEnd(config);
    b.assertExactlyOnceIn(config);
  }

  /**
   * The job ends (Flink's default restarts: only a non-recoverable failure ends it) with the
   * re-creation named, and no row of the new topic was committed; fails as soon as one is.
   */
  private static void assertStopsAsCreatedAgain(
      JobClient run, Table table, String topic, String oldId, String newId) throws Exception {
    var result = run.getJobExecutionResult();
    long deadline = System.currentTimeMillis() + 120_000;
    while (!result.isDone() && System.currentTimeMillis() < deadline) {
      assertThat(TestKit.distinctIds(TestKit.rows(table)))
          .as("rows of the new topic committed")
          .noneMatch(id -> id.startsWith("b"));
      Thread.sleep(200);
    }
    assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .satisfies(
            e ->
                assertThat(trace(e))
                    .contains("Stopping: topic " + topic + " was deleted and created again")
                    .contains(oldId + " -> " + newId)
                    .contains("start the job without state"));
  }

  /**
   * Another cluster with a topic of the same name: refused, naming both cluster ids; with {@code
   * kafka.reset-positions: earliest} it starts there and records it.
   */
  @Test
  void anotherClusterIsRefusedUntilTheUserResets(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    try (EmbeddedKafka other = EmbeddedKafka.start(dir.resolve("kafka2"))) {
      other.createTopic(topic, 1);
      MixedInput c = MixedInput.of("c", 100, 0, 0);
      TestKit.produceValues(other.bootstrapServers(), topic, c.values());
      JobConfig moved = config.with(Map.of("kafka.bootstrap-servers", other.bootstrapServers()));
      String here = clusterId(kafka.bootstrapServers());
      String there = clusterId(other.bootstrapServers());
      assertThatThrownBy(() -> runToEnd(moved))
          .isInstanceOf(PositionsRefusedException.class)
          .hasMessageContaining(here)
          .hasMessageContaining(there)
          .hasMessageContaining("kafka.reset-positions");

      runToEnd(moved.with(Map.of("kafka.reset-positions", "earliest")));
      a.plus(c).assertExactlyOnceIn(config);
      assertThat(summaries(TestKit.table(config), SnapshotSummaryKeys.POSITIONS_RESET))
          .singleElement()
          .asString()
          .contains(here, there, "earliest");
    }
  }

  /**
   * Records deleted (as retention does) before they were committed, found at a start without state:
   * {@code fail} refuses naming the gap; {@code continue} goes on and records it.
   */
  @Test
  void aGapAtStartStopsTheJobOrIsRecorded(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    MixedInput b = MixedInput.of("b", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    deleteBefore(topic, 300);

    assertThatThrownBy(() -> runToEnd(config))
        .isInstanceOf(PositionsRefusedException.class)
        .hasMessageContaining("topic " + topic + " partition 0")
        .hasMessageContaining("first missing offset 200")
        .hasMessageContaining("first available offset 300")
        .hasMessageContaining("100 records gone");

    runToEnd(config.with(Map.of("kafka.on-gap", "continue")));
    Set<String> expected = new java.util.HashSet<>(a.rows());
    for (int i = 100; i < 200; i++) {
      expected.add("b" + i);
    }
    assertThat(TestKit.distinctIds(TestKit.rows(TestKit.table(config)))).isEqualTo(expected);
    Table table = TestKit.table(config);
    assertThat(summaries(table, SnapshotSummaryKeys.GAPS)).containsExactly(topic + "/0:200..299");
    assertThat(summaries(table, SnapshotSummaryKeys.GAP_RECORDS)).containsExactly("100");
    List<TableInspection.PositionsEvent> shown =
        TableInspection.inspect(table, "t", 10, System.currentTimeMillis()).positionEvents();
    assertThat(shown).singleElement().satisfies(e -> assertThat(e.gapRecords()).isEqualTo(100));
  }

  /**
   * Records deleted while the job runs, before its reader got to them ({@code kafka.on-gap:
   * continue}; the admission cap and small fetches keep the reader behind): the consumer jumps to
   * the first available offset, and the gap is recorded (summary, {@code inspect}) before any
   * commit passes it. At 50 records/s the reader is far below offset 2,500 when the first commit
   * comes (under load the first checkpoint can take 30 s). Every record is either in the table once
   * or counted in the gap.
   */
  @Test
  void aGapWhileRunningIsRecordedWithContinue(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config =
        config(
            topic,
            dir,
            Map.of(
                "kafka.on-gap", "continue",
                "admission.max-records-per-second", "50",
                "kafka.properties.max.poll.records", "50",
                "kafka.properties.max.partition.fetch.bytes", "16384"));
    MixedInput a = MixedInput.of("a", 3_000, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 120_000;
    while (TestKit.rows(table).isEmpty() && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    deleteBefore(topic, 2_500);
    deadline = System.currentTimeMillis() + 120_000;
    while (!TestKit.distinctIds(TestKit.rows(table)).contains("a2999")
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
    TestKit.cancelAndWait(run);

    List<String> gaps = summaries(table, SnapshotSummaryKeys.GAPS);
    assertThat(gaps).hasSize(1);
    assertThat(gaps.get(0)).matches(java.util.regex.Pattern.quote(topic) + "/0:\\d+\\.\\.2499");
    int firstMissing = Integer.parseInt(gaps.get(0).replaceAll(".*:(\\d+)\\..*", "$1"));
    assertThat(firstMissing).isBetween(1, 2_499);
    Set<String> expected = new java.util.HashSet<>();
    for (int i = 0; i < 3_000; i++) {
      if (i < firstMissing || i >= 2_500) {
        expected.add("a" + i);
      }
    }
    List<org.apache.iceberg.data.Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(expected);
    assertThat(rows).as("none twice").hasSize(expected.size());
    assertThat(summaries(table, SnapshotSummaryKeys.GAP_RECORDS))
        .containsExactly(Integer.toString(2_500 - firstMissing));
    assertThat(TableInspection.inspect(table, "t", 10, System.currentTimeMillis()).positionEvents())
        .singleElement()
        .satisfies(e -> assertThat(e.gapRecords()).isEqualTo(2_500L - firstMissing));
  }

  /**
   * A restore whose state needs offsets Kafka deleted: the consumer's {@code auto.offset.reset} is
   * {@code none}, so the job stops once with the gap named (no jump, no endless restarts).
   */
  @Test
  void aGapAtRestoreStopsTheJob(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    awaitRows(TestKit.table(config), a.rows().size());
    String savepoint =
        run.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(120, TimeUnit.SECONDS);
    MixedInput b = MixedInput.of("b", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    deleteBefore(topic, 300);

    // with checkpointing Flink restarts a failed job for ever by default: only a non-recoverable
    // failure ends it
    JobClient restored = start(config, savepoint, new Configuration());
    assertThatThrownBy(() -> restored.getJobExecutionResult().get(180, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .satisfies(
            e ->
                assertThat(trace(e))
                    .contains("first missing offset 200")
                    .contains("first available offset 300")
                    .contains("kafka.on-gap"));
    assertThat(TestKit.rows(TestKit.table(config))).hasSize(a.rows().size());
  }

  /**
   * Every starting mode honours the table after a stop: records produced while the job was stopped
   * are all committed, none twice ({@code latest} read none of them before).
   */
  @ParameterizedTest
  @ValueSource(strings = {"table", "committed", "earliest", "latest"})
  void everyStartingModeResumesAtTheTablesPositions(String mode, @TempDir Path dir)
      throws Exception {
    String topic = topic(2);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 300, 0, 40);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    MixedInput b = MixedInput.of("b", 300, 0, 40);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    runToEnd(config.with(Map.of("kafka.starting-offsets", mode)));
    a.plus(b).assertExactlyOnceIn(config);
  }

  /**
   * Another writer's commits and expiry (retain last 1) leave no positions in the history: the
   * sink's tag still has them. Without the tag, the table's rows make the start refuse.
   */
  @Test
  void positionsSurviveExpiryAndLostPositionsAreRefused(@TempDir Path dir) throws Exception {
    String topic = topic(2);
    JobConfig config = config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 300, 0, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    Table table = TestKit.table(config);
    otherWritersCommitAndExpire(table);
    assertThat(TablePositions.readAsOf(table, table.currentSnapshot())).isEmpty();

    MixedInput b = MixedInput.of("b", 200, 0, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    runToEnd(config);
    a.plus(b).assertExactlyOnceIn(config);

    table.refresh();
    table.manageSnapshots().removeTag(TablePositions.tagName(config.sinkId())).commit();
    otherWritersCommitAndExpire(table);
    assertThatThrownBy(() -> runToEnd(config))
        .isInstanceOf(PositionsRefusedException.class)
        .hasMessageContaining("holds rows of topic " + topic)
        .hasMessageContaining("kafka.reset-positions");
  }

  /**
   * The table is rolled back under a job running with state: its next commit stops the job with the
   * case named, and nothing is written on top.
   */
  @Test
  void aRollbackUnderARunningJobStopsIt(@TempDir Path dir) throws Exception {
    String topic = topic(1);
    JobConfig config = config(topic, dir, Map.of());
    SpatialIngestJob.ensureTables(config);
    Table table = TestKit.table(config);
    table.newFastAppend().set("other-writer", "before").commit();
    table.refresh();
    long before = table.currentSnapshot().snapshotId();
    MixedInput a = MixedInput.of("a", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    awaitRows(table, a.rows().size());
    table.manageSnapshots().rollbackTo(before).commit();

    MixedInput b = MixedInput.of("b", 100, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    assertThatThrownBy(() -> run.getJobExecutionResult().get(180, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .satisfies(e -> assertThat(trace(e)).contains("rolled back or replaced"));
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).isEqualTo(before);
  }

  private static void otherWritersCommitAndExpire(Table table) {
    table.refresh();
    for (int i = 0; i < 3; i++) {
      table.newFastAppend().set("other-writer", Integer.toString(i)).commit();
    }
    table.expireSnapshots().retainLast(1).expireOlderThan(Long.MAX_VALUE).commit();
    table.refresh();
  }

  private static List<String> summaries(Table table, String key) {
    table.refresh();
    return java.util.stream.StreamSupport.stream(table.snapshots().spliterator(), false)
        .map(Snapshot::summary)
        .filter(s -> s.containsKey(key))
        .map(s -> s.get(key))
        .collect(Collectors.toList());
  }

  private static void awaitRows(Table table, int rows) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (TestKit.rows(table).size() < rows && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
    assertThat(TestKit.rows(table)).hasSize(rows);
  }

  private static String trace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }

  private static String topic(int partitions) throws Exception {
    String topic = "ids-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, partitions);
    return topic;
  }

  private static void recreate(String topic, int partitions) throws Exception {
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

  private static void deleteBefore(String topic, long offset) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      admin
          .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(offset)))
          .all()
          .get();
    }
  }

  private static String topicId(String bootstrap, String topic) throws Exception {
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

  private static String clusterId(String bootstrap) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      return admin.describeCluster().clusterId().get();
    }
  }

  private static JobConfig config(String topic, Path dir, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("kafka.starting-offsets", "table");
    m.putIfAbsent("sink.max-latency", "1s");
    m.putIfAbsent("sink.memory-budget", "64MB");
    return TestKit.config(kafka.bootstrapServers(), topic, dir.resolve("warehouse"), m);
  }

  /** A bounded run without restarts, to its end. */
  private static void runToEnd(JobConfig config) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.executeAsync("positions").getJobExecutionResult().get();
  }

  /** An unbounded run (from {@code savepoint} if not null) with Flink's default restarts. */
  private static JobClient start(JobConfig config, String savepoint, Configuration conf)
      throws Exception {
    return build(config, savepoint, conf).executeAsync("positions-unbounded");
  }

  /** The unbounded job of {@link #start}, built (its start decided) but not run yet. */
  private static StreamExecutionEnvironment build(
      JobConfig config, String savepoint, Configuration conf) {
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    return env;
  }
}
