package org.spatialingest.sink.compat;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;

/**
 * Writes a savepoint fixture of this build ({@link SavepointFixtures}); disabled unless {@code
 * -Dsavepoint.fixture=<name>} names the one to write (a new name whenever a state or staging format
 * version changes; existing fixtures are never overwritten). Run:
 *
 * <pre>
 * mvn -B test -Dtest=SavepointFixtureGenerator -Dsavepoint.fixture=filebatch5-writerstate3-staging3-aggregator2
 * </pre>
 *
 * <p>A name starting with {@code files-} writes a fixture that reads two files instead of Kafka
 * (one file per checkpoint, so the second is read only after the restore).
 *
 * <p>The job reads 3,000 records (one in 20 a reject) with T = 48 KB, L = 2 h and a checkpoint
 * interval of 30 min (none comes before the savepoint), so files close by bytes only; then it stops
 * with a canonical savepoint. That savepoint holds a batch of closed files of the telemetry table,
 * and buffered rows of both tables in staging runs. When the committer is about to commit the
 * batch, the warehouse is copied: the fixture's table has the batch pending, as after a crash
 * between checkpoint and commit.
 */
@EnabledIfSystemProperty(named = "savepoint.fixture", matches = ".+")
class SavepointFixtureGenerator {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @AfterEach
  void removeHook() {
    SinkFaults.install(null);
  }

  @Test
  void writeFixture(@TempDir Path tmp) throws Exception {
    String name = System.getProperty("savepoint.fixture");
    Path out = SavepointFixtures.RESOURCES.resolve(name);
    assertThat(out).as("fixtures are never overwritten").doesNotExist();
    Path warehouse = SavepointFixtures.warehouseRoot(name);
    SavepointFixtures.deleteTree(warehouse);

    List<String> before = SavepointFixtures.input("f", 3_000);
    boolean readsFiles = SavepointFixtures.readsFiles(name);
    Path input = SavepointFixtures.inputRoot(name);
    if (readsFiles) {
      // two files: one read before the savepoint, one handed out only after it
      SavepointFixtures.deleteTree(input);
      Files.createDirectories(input);
      Files.write(input.resolve("part-0.ndjson"), before, StandardCharsets.UTF_8);
      Files.write(
          input.resolve("part-1.ndjson"),
          SavepointFixtures.input("g", 3_000),
          StandardCharsets.UTF_8);
    } else {
      kafka.createTopic(SavepointFixtures.TOPIC, 1);
      TestKit.produceValues(
          kafka.bootstrapServers(), SavepointFixtures.TOPIC, SavepointFixtures.bytes(before));
    }
    JobConfig config = SavepointFixtures.config(kafka.bootstrapServers(), name, Map.of());

    AtomicBoolean copied = new AtomicBoolean();
    SinkFaults.install(
        point -> {
          if (point == SinkFaults.Point.BEFORE_COMMIT && copied.compareAndSet(false, true)) {
            try {
              SavepointFixtures.copyTree(warehouse, out.resolve("warehouse"));
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          }
        });
    JobClient job = SavepointRestoreTest.start(config, 2, null);
    // every record read and every file closed by bytes written (nothing commits before the
    // savepoint)
    long deadline = System.currentTimeMillis() + 60_000;
    while (parquetFiles(warehouse) < 1 && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
    Thread.sleep(5_000);
    String savepoint =
        job.stopWithSavepoint(
                false, tmp.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(120, TimeUnit.SECONDS);
    assertThat(copied).as("the savepoint's batch reached the committer").isTrue();
    SavepointFixtures.copyTree(Path.of(java.net.URI.create(savepoint)), out.resolve("savepoint"));
    if (readsFiles) {
      SavepointFixtures.copyTree(input, out.resolve("input"));
    } else {
      Files.write(out.resolve("input-before.ndjson"), before, StandardCharsets.UTF_8);
      Files.write(
          out.resolve("input-after.ndjson"),
          SavepointFixtures.input("g", 500),
          StandardCharsets.UTF_8);
    }

    // what the fixture claims: staging runs of both tables, and data files not yet committed
    try (Stream<Path> files = Files.walk(out.resolve("warehouse"))) {
      List<Path> runs = files.filter(p -> p.toString().endsWith(".rows")).toList();
      assertThat(runs.stream().map(p -> p.toString().replaceAll("/_staging/.*", "")).distinct())
          .as("both tables have buffered rows in staging runs")
          .hasSize(2);
    }
    assertThat(parquetFiles(out.resolve("warehouse"))).as("a pending batch").isPositive();
    try (Stream<Path> files = Files.walk(out.resolve("warehouse"))) {
      assertThat(files.filter(p -> p.toString().endsWith(".batch")))
          .as("the pending batch's closed files, stored where its state points")
          .hasSize(1);
    }
  }

  private static long parquetFiles(Path root) throws IOException {
    if (!Files.exists(root)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(p -> p.toString().endsWith(".parquet")).count();
    }
  }
}
