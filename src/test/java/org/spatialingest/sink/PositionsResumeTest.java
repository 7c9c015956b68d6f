package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.spatialingest.sink.PositionsJobs.awaitRows;
import static org.spatialingest.sink.PositionsJobs.runToEnd;
import static org.spatialingest.sink.PositionsJobs.start;
import static org.spatialingest.sink.PositionsJobs.summaries;
import static org.spatialingest.sink.PositionsJobs.trace;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;
import org.spatialingest.tools.TableInspection;

/**
 * Where a start resumes when Kafka or the table changed under the positions (issue #34): records
 * deleted from Kafka before they were committed (at start, while running, at a restore), every
 * starting mode after a stop, positions beyond snapshot expiry, a rollback under a running job.
 * Real broker, MiniCluster and Hadoop catalog; bounded runs of a few hundred records. A topic
 * created again and another cluster: {@link PositionsIdentityTest}.
 */
class PositionsResumeTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);
  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final PositionsJobs jobs = new PositionsJobs(kafka, "ids-");

  /**
   * Records deleted (as retention does) before they were committed, found at a start without state:
   * {@code fail} refuses naming the gap; {@code continue} goes on and records it.
   */
  @Test
  void aGapAtStartStopsTheJobOrIsRecorded(@TempDir Path dir) throws Exception {
    String topic = jobs.topic(1);
    JobConfig config = jobs.config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    runToEnd(config);
    MixedInput b = MixedInput.of("b", 200, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    jobs.deleteBefore(topic, 300);

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
   * or counted in the gap. Only 100 records lie past the gap: the reader takes them at the cap's 50
   * records/s, so each one there costs the test 20 ms of waiting (500 of them cost 10 s).
   */
  @Test
  void aGapWhileRunningIsRecordedWithContinue(@TempDir Path dir) throws Exception {
    String topic = jobs.topic(1);
    JobConfig config =
        jobs.config(
            topic,
            dir,
            Map.of(
                "kafka.on-gap", "continue",
                "admission.max-records-per-second", "50",
                "kafka.properties.max.poll.records", "50",
                "kafka.properties.max.partition.fetch.bytes", "16384"));
    int records = 2_600;
    MixedInput a = MixedInput.of("a", records, 0, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient run = start(config, null, new Configuration());
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 120_000;
    while (TestKit.rows(table).isEmpty() && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    jobs.deleteBefore(topic, 2_500);
    deadline = System.currentTimeMillis() + 120_000;
    while (!TestKit.distinctIds(TestKit.rows(table)).contains("a" + (records - 1))
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
    for (int i = 0; i < records; i++) {
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
    String topic = jobs.topic(1);
    JobConfig config = jobs.config(topic, dir, Map.of());
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
    jobs.deleteBefore(topic, 300);

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
   * are all committed, none twice ({@code latest} read none of them before). One table, stopped and
   * started once per mode in turn: the modes were four cases of their own, each paying a first run
   * and a table (40 s of the class's 91 s in CI).
   */
  @Test
  void everyStartingModeResumesAtTheTablesPositions(@TempDir Path dir) throws Exception {
    String topic = jobs.topic(2);
    JobConfig config = jobs.config(topic, dir, Map.of());
    MixedInput committed = MixedInput.of("a", 300, 0, 40);
    TestKit.produceValues(kafka.bootstrapServers(), topic, committed.values());
    runToEnd(config);
    for (String mode : List.of("table", "committed", "earliest", "latest")) {
      MixedInput whileStopped = MixedInput.of(mode + "-", 300, 0, 40);
      TestKit.produceValues(kafka.bootstrapServers(), topic, whileStopped.values());
      runToEnd(config.with(Map.of("kafka.starting-offsets", mode)));
      committed = committed.plus(whileStopped);
      try {
        committed.assertExactlyOnceIn(config);
      } catch (AssertionError e) {
        throw new AssertionError("after a start with kafka.starting-offsets: " + mode, e);
      }
    }
  }

  /**
   * Another writer's commits and expiry (retain last 1) leave no positions in the history: the
   * sink's tag still has them. Without the tag, the table's rows make the start refuse.
   */
  @Test
  void positionsSurviveExpiryAndLostPositionsAreRefused(@TempDir Path dir) throws Exception {
    String topic = jobs.topic(2);
    JobConfig config = jobs.config(topic, dir, Map.of());
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
    String topic = jobs.topic(1);
    JobConfig config = jobs.config(topic, dir, Map.of());
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
}
