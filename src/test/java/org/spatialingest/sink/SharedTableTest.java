package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.StagingReferences;
import org.spatialingest.sink.write.SinkFiles;

/**
 * Several jobs write one table, each with its own topic and {@code sink.id} (issue #34, item 5): a
 * start never removes another sink id's staging runs or files, every record of every job is
 * committed exactly once across kills, starts without state and restores, and a second live job
 * with the same sink id is refused.
 */
class SharedTableTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(6);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final String UID = SpatialIngestJob.SINK_UID;

  /**
   * Job B starts without state on another topic into the table while job A's rows wait in its
   * staging runs (the observation: B's first clean-up deleted A's live run).
   */
  @Test
  void aStartNeverRemovesAnotherSinksStagingRuns(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    MixedInput a = MixedInput.of("a", 400, 30, 25);
    MixedInput b = MixedInput.of("b", 400, 30, 25);
    JobConfig configA = config("shared-a", "a", dir, "1h");
    JobConfig configB = config("shared-b", "b", dir, "1s");
    produce("shared-a", a);
    produce("shared-b", b);

    JobClient jobA = start(configA, null);
    Table table = TestKit.table(configA);
    awaitStaged(table, "a", a.rows().size());
    List<Path> runsOfA = runs(table, "a");
    assertThat(runsOfA).isNotEmpty();
    // an orphan of B's scope: its removal shows that B's clean-up has run
    String orphanOfB =
        SinkFileNames.stagingRun(
            table.location(), scope("b"), 1, "0000000000000000000000000000000e", 0);
    try (var out = table.io().newOutputFile(orphanOfB).create()) {
      out.write(1);
    }

    JobClient jobB = start(configB, null);
    await("B's clean-up", () -> !table.io().newInputFile(orphanOfB).exists());
    await("B's rows", () -> committedIds(configA, "b") >= b.rows().size());
    assertThat(runsOfA).as("A's staging runs after B's start and clean-up").allMatch(Files::exists);
    assertThat(TestKit.rows(table).stream().filter(r -> idOf(r).startsWith("a")))
        .as("A has committed nothing yet")
        .isEmpty();

    // A commits what it staged after a restore from its savepoint, at a short L
    String savepoint = savepoint(jobA, dir);
    jobA = start(configA.with(Map.of("sink.max-latency", "1s")), savepoint);
    await("A's rows", () -> committedIds(configA, "a") >= a.rows().size());
    awaitLateDuplicates(flink, jobA);
    TestKit.cancelAndWait(jobA);
    TestKit.cancelAndWait(jobB);
    a.plus(b).assertExactlyOnceIn(configA);
  }

  /**
   * The scenario: two jobs on one table, each with its own topic; one is killed (a cancel
   * without savepoint: what a MiniCluster has for kill -9) with rows in staging and started again
   * without state, the other is stopped with a savepoint and restored from it.
   */
  @Test
  void killOneStartItWithoutStateRestoreTheOtherEveryRecordOnce(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    MixedInput a = MixedInput.of("a1", 300, 30, 25);
    MixedInput b = MixedInput.of("b1", 300, 30, 25);
    JobConfig configA = config("issue-a", "region-a", dir, "1s");
    JobConfig configB = config("issue-b", "region-b", dir, "1h");
    produce("issue-a", a);
    produce("issue-b", b);
    JobClient jobA = start(configA, null);
    JobClient jobB = start(configB, null);
    Table table = TestKit.table(configA);
    awaitStaged(table, "region-b", b.rows().size());
    TestKit.cancelAndWait(jobB);

    MixedInput a2 = MixedInput.of("a2", 300, 30, 25);
    MixedInput b2 = MixedInput.of("b2", 300, 30, 25);
    produce("issue-a", a2);
    produce("issue-b", b2);
    jobB = start(configB.with(Map.of("sink.max-latency", "1s")), null);
    String savepoint = savepoint(jobA, dir);
    MixedInput a3 = MixedInput.of("a3", 300, 30, 25);
    produce("issue-a", a3);
    jobA = start(configA, savepoint);

    MixedInput all = a.plus(a2).plus(a3).plus(b).plus(b2);
    await("every row", () -> TestKit.rows(TestKit.table(configA)).size() >= all.rows().size());
    awaitLateDuplicates(flink, jobA);
    awaitLateDuplicates(flink, jobB);
    TestKit.cancelAndWait(jobA);
    TestKit.cancelAndWait(jobB);
    all.assertExactlyOnceIn(configA);
  }

  /** A second job with the same sink id on the same table is refused while the first is alive. */
  @Test
  void aSecondLiveJobWithTheSameSinkIdIsRefused(@TempDir Path dir) throws Exception {
    MixedInput a = MixedInput.of("a", 300, 30, 0);
    JobConfig configA = config("same-a", "same", dir, "1h");
    JobConfig configB = config("same-b", "same", dir, "1h");
    produce("same-a", a);
    produce("same-b", MixedInput.of("b", 300, 30, 0));
    JobClient jobA = start(configA, null);
    Table table = TestKit.table(configA);
    awaitStaged(table, "same", a.rows().size());
    List<Path> runsOfA = runs(table, "same");

    JobClient jobB = start(configB, null);
    assertThatThrownBy(() -> jobB.getJobExecutionResult().get(120, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .satisfies(
            e -> {
              Throwable refusal =
                  ExceptionUtils.findThrowable(
                          e,
                          t ->
                              t.getMessage() != null
                                  && t.getMessage().contains("another job writes table"))
                      .orElseThrow(() -> new AssertionError("no refusal in", e));
              assertThat(refusal.getMessage())
                  .contains("telemetry")
                  .contains("sink id 'same'")
                  .contains("job " + jobA.getJobID().toHexString())
                  .contains("another `sink.id`")
                  .contains("stop job " + jobA.getJobID().toHexString());
            });
    assertThat(jobA.getJobStatus().get().isGloballyTerminalState()).as("A still runs").isFalse();
    assertThat(runsOfA).as("A's staging runs").allMatch(Files::exists);
    TestKit.cancelAndWait(jobA);
  }

  /**
   * The clean-up considers only its own sink id's closed data files; unscoped names (of builds
   * before sink ids) only if it claims them.
   */
  @Test
  void theOrphanCleanerRemovesOnlyItsOwnSinkIdsFiles(@TempDir Path dir) throws Exception {
    JobConfig config = TestKit.config("localhost:1", "unused", dir, Map.of());
    SpatialIngestJob.ensureTables(config);
    Table table = TestKit.table(config);
    String token = "0123456789abcdef0123456789abcdef";
    String own = dataFile(table, SinkFileNames.operationId(scope("b"), token));
    String other = dataFile(table, SinkFileNames.operationId(scope("a"), token));
    String unscoped = dataFile(table, UID + "_" + token);
    String otherRun = SinkFileNames.stagingRun(table.location(), scope("a"), 5, token, 0);
    try (var out = table.io().newOutputFile(otherRun).create()) {
      out.write(1);
    }

    OrphanCleaner.clean(
        table,
        scope("b"),
        Map.<String, Long>of().keySet(),
        new StagingReferences(-1, Map.of()),
        0,
        java.util.Set.of(),
        new java.util.HashSet<>());
    assertThat(table.io().newInputFile(own).exists()).as("B's orphan").isFalse();
    assertThat(table.io().newInputFile(other).exists()).as("A's file").isTrue();
    assertThat(table.io().newInputFile(otherRun).exists()).as("A's run").isTrue();
    assertThat(table.io().newInputFile(unscoped).exists()).as("an earlier build's file").isTrue();

    OrphanCleaner.clean(
        table,
        new SinkScope(UID, "b", true),
        java.util.Set.of(),
        new StagingReferences(-1, Map.of()),
        0,
        java.util.Set.of(),
        new java.util.HashSet<>());
    assertThat(table.io().newInputFile(unscoped).exists())
        .as("claimed by the default sink id")
        .isFalse();
    assertThat(table.io().newInputFile(other).exists()).as("A's file").isTrue();
  }

  private static String dataFile(Table table, String operationId) throws Exception {
    String location = table.location() + "/data/00000-0-" + operationId + "-00001.parquet";
    try (var out = table.io().newOutputFile(location).create()) {
      out.write(1);
    }
    return location;
  }

  private static SinkScope scope(String sinkId) {
    return new SinkScope(UID, sinkId, false);
  }

  private static JobConfig config(String topic, String sinkId, Path dir, String maxLatency)
      throws Exception {
    Map<String, String> m = new HashMap<>();
    m.put("kafka.starting-offsets", "table");
    m.put("sink.id", sinkId);
    m.put("sink.max-latency", maxLatency);
    m.put("sink.target-file-size", "1GB");
    m.put("sink.memory-budget", "64MB");
    return TestKit.config(kafka.bootstrapServers(), topic, dir.resolve("warehouse"), m);
  }

  private static void produce(String topic, MixedInput input) throws Exception {
    try {
      kafka.createTopic(topic, 2);
    } catch (Exception e) {
      // created by an earlier call
    }
    TestKit.produceValues(kafka.bootstrapServers(), topic, input.values());
  }

  private static JobClient start(JobConfig config, String savepoint) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    return env.executeAsync("shared-" + config.topic());
  }

  /**
   * Lets a job at L = 1 s commit what it still buffers: a late duplicate would be closed at the
   * barrier after it is 0.7 s old and committed at the next checkpoint (C = 300 ms), so within 6
   * checkpoints however slow the machine is.
   */
  private static void awaitLateDuplicates(MiniCluster flink, JobClient job) throws Exception {
    JobCheckpoints.awaitMore(flink, job.getJobID(), 6);
  }

  private static String savepoint(JobClient job, Path dir) throws Exception {
    return job.stopWithSavepoint(
            false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
        .get(120, TimeUnit.SECONDS);
  }

  private static Path stagingDir(Table table, String sinkId) {
    return Path.of(java.net.URI.create(SinkFileNames.stagingDir(table.location(), scope(sinkId))));
  }

  private static List<Path> runs(Table table, String sinkId) throws Exception {
    Path d = stagingDir(table, sinkId);
    if (!Files.isDirectory(d)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(d)) {
      return files.filter(f -> SinkFileNames.parseStaging(f.toString()) != null).toList();
    }
  }

  /** Waits until the runs of {@code sinkId} in the table's staging area hold {@code rows} rows. */
  private static void awaitStaged(Table table, String sinkId, long rows) throws Exception {
    await(
        rows + " rows staged by " + sinkId,
        () -> {
          long staged = 0;
          for (Path run : runs(table, sinkId)) {
            try (var in = Files.newInputStream(run)) {
              staged += SinkFiles.stagedRows(in);
            } catch (java.io.IOException e) {
              // being written: counted next time
            }
          }
          return staged >= rows;
        });
  }

  private static long committedIds(JobConfig config, String prefix) throws Exception {
    return TestKit.rows(TestKit.table(config)).stream()
        .filter(r -> idOf(r).startsWith(prefix))
        .count();
  }

  private static String idOf(org.apache.iceberg.data.Record r) {
    return (String) r.getField("id");
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  private static void await(String what, Condition condition) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (!condition.holds()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(100);
    }
  }
}
