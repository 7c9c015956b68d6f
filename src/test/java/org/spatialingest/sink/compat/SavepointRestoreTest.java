package org.spatialingest.sink.compat;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;

/**
 * Restores every savepoint fixture ({@link SavepointFixtures}, one per state-format generation,
 * written by {@link SavepointFixtureGenerator}) into this build, and checks the exact row set of
 * both tables: the pending batch committed once, the staged rows and the rest of the input
 * committed once, nothing else, no orphan file. As Flink's serializer upgrade tests keep a snapshot
 * per release: a format change that cannot read an earlier fixture fails here.
 */
class SavepointRestoreTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  static Stream<String> fixtures() throws Exception {
    try (Stream<Path> dirs = Files.list(SavepointFixtures.RESOURCES)) {
      return dirs
          .filter(Files::isDirectory)
          .map(d -> d.getFileName().toString())
          .sorted()
          .toList()
          .stream();
    }
  }

  /**
   * The state formats a savepoint holds, by the token a fixture's name gives each, and the class
   * whose {@code VERSION} (what this build writes) it is: a version bumped without a new fixture
   * fails here, so every format version in use is restored by the test above.
   */
  private static final Map<String, String> FORMATS =
      Map.of(
          "filebatch", "org.spatialingest.sink.commit.FileBatchSerializer",
          "writerstate", "org.spatialingest.sink.write.WriterStateSerializer",
          "staging", "org.spatialingest.sink.write.StagingArea",
          "aggregator", "org.spatialingest.sink.commit.AggregatorStateSerializer");

  @Test
  void everyStateFormatVersionThisBuildWritesHasAFixture() throws Exception {
    List<String> names = fixtures().toList();
    for (Map.Entry<String, String> format : FORMATS.entrySet()) {
      java.lang.reflect.Field version =
          Class.forName(format.getValue()).getDeclaredField("VERSION");
      version.setAccessible(true);
      String token = format.getKey() + version.getInt(null);
      assertThat(names)
          .as(
              "a savepoint fixture holding %s (write it: mvn -B test -Dtest=SavepointFixtureGenerator"
                  + " -Dsavepoint.fixture=<name listing every format version>)",
              token)
          .anySatisfy(n -> assertThat(List.of(n.split("-"))).contains(token));
    }
  }

  @ParameterizedTest
  @MethodSource("fixtures")
  void restoresWithExactlyTheRowsOfItsInput(String name, @TempDir Path tmp) throws Exception {
    try (FileChannel lock = SavepointFixtures.lock()) {
      restore(name, tmp);
    }
  }

  private void restore(String name, Path tmp) throws Exception {
    Path fixture = SavepointFixtures.RESOURCES.resolve(name);
    Path warehouse = SavepointFixtures.warehouseRoot(name);
    SavepointFixtures.deleteTree(warehouse);
    SavepointFixtures.copyTree(fixture.resolve("warehouse"), warehouse);
    Path savepoint = tmp.resolve("savepoint");
    SavepointFixtures.copyTree(fixture.resolve("savepoint"), savepoint);

    JobConfig config =
        SavepointFixtures.config(
            kafka.bootstrapServers(),
            name,
            Map.of("sink.max-latency", "1s", "checkpoint.interval", "300ms"));
    List<String> all = new ArrayList<>();
    JobClient job;
    if (SavepointFixtures.readsFiles(name)) {
      // the same files at the same path as when the savepoint was taken; the job ends by itself
      Path input = SavepointFixtures.inputRoot(name);
      SavepointFixtures.deleteTree(input);
      SavepointFixtures.copyTree(fixture.resolve("input"), input);
      try (Stream<Path> files = Files.list(input)) {
        for (Path file : files.sorted().toList()) {
          all.addAll(SavepointFixtures.readLines(file));
        }
      }
      job = start(config, 2, savepoint.toUri().toString());
      job.getJobExecutionResult().get(120, TimeUnit.SECONDS);
    } else {
      all.addAll(SavepointFixtures.readLines(fixture.resolve("input-before.ndjson")));
      // the same records at the same offsets as when the savepoint was taken
      try (Admin admin = Admin.create(kafka.adminProperties())) {
        if (admin.listTopics().names().get().contains(SavepointFixtures.TOPIC)) {
          admin.deleteTopics(List.of(SavepointFixtures.TOPIC)).all().get();
          while (admin.listTopics().names().get().contains(SavepointFixtures.TOPIC)) {
            Thread.sleep(100);
          }
        }
      }
      kafka.createTopic(SavepointFixtures.TOPIC, 1);
      TestKit.produceValues(
          kafka.bootstrapServers(), SavepointFixtures.TOPIC, SavepointFixtures.bytes(all));
      job = start(config, 2, savepoint.toUri().toString());
      List<String> after = SavepointFixtures.readLines(fixture.resolve("input-after.ndjson"));
      TestKit.produceValues(
          kafka.bootstrapServers(), SavepointFixtures.TOPIC, SavepointFixtures.bytes(after));
      all.addAll(after);
    }

    Set<String> ids = SavepointFixtures.rowIds(all);
    Table table = TestKit.table(config);
    long deadline = System.currentTimeMillis() + 120_000;
    while (TestKit.rows(table).size() < ids.size() && System.currentTimeMillis() < deadline) {
      Thread.sleep(300);
    }
    if (!job.getJobStatus().get().isGloballyTerminalState()) {
      Thread.sleep(2_000); // a late duplicate would show up in the next commits
      TestKit.cancelAndWait(job);
    }

    table.refresh();
    List<Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).as("every row of the input").isEqualTo(ids);
    assertThat(rows).as("every row once").hasSize(ids.size());
    Table rejects =
        Catalogs.catalogLoader(config)
            .loadCatalog()
            .loadTable(Catalogs.rejectsTableIdentifier(config));
    Set<String> raw = new HashSet<>();
    List<Record> rejected = TestKit.rows(rejects);
    for (Record r : rejected) {
      raw.add(new String(TestKit.bytes(r.getField("raw")), StandardCharsets.UTF_8));
    }
    assertThat(raw).as("every reject of the input").isEqualTo(SavepointFixtures.rejects(all));
    assertThat(rejected).as("every reject once").hasSize(raw.size());
    TestKit.assertNoOrphans(table);
  }

  static JobClient start(JobConfig config, int parallelism, String savepoint) throws Exception {
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    SpatialIngestJob.build(env, config, false);
    return env.executeAsync("savepoint-fixture");
  }
}
