package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.StagingReferences;
import org.spatialingest.table.Catalogs;

/**
 * Staging runs left behind by a failure are removed even when the restored job fails again before
 * its cleanup ran (found by the chaos run, issue #11: three runs of one barrier stayed in the
 * rejects table's staging area after two failures in a row).
 *
 * <p>The writers fail right after staging a barrier's runs (that checkpoint never completes, so its
 * runs are orphans), the job restores from the checkpoint before; the restored job completes a
 * checkpoint and fails just before removing those orphans, so the next restore is from a checkpoint
 * <em>newer</em> than the orphans' barrier. Telling orphans by "written at a barrier after the
 * restored checkpoint" alone then keeps them forever.
 */
class StagingCleanupTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final SinkScope SCOPE = new SinkScope("spatial-sink", "cleanup", false);

  @AfterEach
  void removeFaults() {
    SinkFaults.install(null);
  }

  @Test
  @Tag("extended") // ~30 s; the default run keeps the restored state's clean-up test below
  void runsOfAFailedBarrierGoEvenIfTheRestoredJobFailsBeforeItsCleanup(@TempDir Path dir)
      throws Exception {
    String topic = "staging-cleanup";
    kafka.createTopic(topic, 2);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of("sink.max-latency", "3s", "sink.target-file-size", "1GB"));
    MixedInput input = MixedInput.of("s", 8_000, 30, 25);
    Table table = null;

    AtomicBoolean armed = new AtomicBoolean();
    AtomicLong newestSeen = new AtomicLong(-1);
    AtomicReference<List<Path>> orphaned = new AtomicReference<>();
    AtomicBoolean cleanupFailed = new AtomicBoolean();
    List<Path> stagingDirs =
        List.of(
            dir.resolve("warehouse/spatial/telemetry/_staging"),
            dir.resolve("warehouse/spatial/telemetry_rejects/_staging"));
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_STAGING && armed.get() && orphaned.get() == null) {
            // one writer (parallelism 1): a barrier newer than any seen at the previous barrier
            // means this writer just staged rows at this barrier
            List<Path> runs = runs(stagingDirs);
            long newest = runs.stream().mapToLong(StagingCleanupTest::barrier).max().orElse(-1);
            long before = newestSeen.getAndSet(newest);
            if (before >= 0 && newest > before) {
              orphaned.set(runs.stream().filter(r -> barrier(r) == newest).toList());
              throw new IllegalStateException("injected failure after staging barrier " + newest);
            }
          }
          if (p == SinkFaults.Point.BEFORE_ORPHAN_CLEANUP
              && orphaned.get() != null
              && cleanupFailed.compareAndSet(false, true)) {
            throw new IllegalStateException("injected failure before the cleanup of the restore");
          }
        });

    JobClient job = start(config);
    try (Producing producing = new Producing(topic, input.values())) {
      table = awaitTable(config);
      while (table.currentSnapshot() == null) { // a first commit: a checkpoint to restore from
        Thread.sleep(100);
        table.refresh();
      }
      armed.set(true);
      await("the failure after staging", () -> orphaned.get() != null);
      await("the failure before the cleanup", cleanupFailed::get);
      producing.awaitDone();
    }
    await(
        "every row committed",
        () -> TestKit.rows(TestKit.table(config)).size() >= input.rows().size());
    Thread.sleep(2_000); // a late duplicate, and the cleanup of the last restore
    TestKit.cancelAndWait(job);

    assertThat(orphaned.get()).as("runs staged at the failed barrier").isNotEmpty();
    assertThat(orphaned.get()).as("left behind").noneMatch(Files::exists);
    ResumeWithoutStateTest.assertExactly(config, input);
    TestKit.assertNoOrphans(
        Catalogs.catalogLoader(config)
            .loadCatalog()
            .loadTable(Catalogs.rejectsTableIdentifier(config)));
  }

  /**
   * What a later restore may still need stays: the runs the restored state references (its own
   * writers' up to its barrier, and the runs those had restored from earlier writers, up to the
   * barrier of the state they restored), and the current writers' runs.
   */
  @Test
  void theCleanupKeepsEveryRunTheRestoredStateMayReference(@TempDir Path dir) throws Exception {
    JobConfig config = TestKit.config("localhost:1", "unused", dir, Map.of());
    Table table =
        org.spatialingest.table.TableBootstrap.ensureTable(
            Catalogs.catalogLoader(config).loadCatalog(),
            Catalogs.tableIdentifier(config),
            org.spatialingest.table.TelemetryTable.LAYOUT,
            config.partitioning());
    String x = "0000000000000000000000000000000a"; // failed before its cleanup: restored up to 40
    String y = "0000000000000000000000000000000b"; // wrote the restored checkpoint 46
    String z = "0000000000000000000000000000000c"; // current
    String gone = "0000000000000000000000000000000d"; // no horizon: never referenced
    Map<String, Boolean> kept = new java.util.LinkedHashMap<>();
    kept.put(run(table, 39, x), true); // y restored it at 40 and may still hold it
    kept.put(run(table, 40, x), true);
    kept.put(run(table, 41, x), false); // x's barrier 41 never completed
    kept.put(run(table, 44, y), true);
    kept.put(run(table, 46, y), true);
    kept.put(run(table, 47, y), false); // after the restored checkpoint
    kept.put(run(table, 30, gone), false);
    kept.put(run(table, 47, z), true);
    Set<String> tokens = new HashSet<>();

    int deleted =
        OrphanCleaner.clean(
            table,
            SCOPE,
            Set.of(z),
            new StagingReferences(46, Map.of(x, 40L, y, 46L)),
            System.currentTimeMillis(),
            Set.of(),
            tokens);

    kept.forEach(
        (run, keep) ->
            assertThat(table.io().newInputFile(run).exists()).as("%s kept", run).isEqualTo(keep));
    assertThat(deleted).isEqualTo(3);
    assertThat(tokens).containsExactlyInAnyOrder(x, y, z);
  }

  private static String run(Table table, long checkpoint, String token) throws Exception {
    String location = SinkFileNames.stagingRun(table.location(), SCOPE, checkpoint, token, 0);
    try (var out = table.io().newOutputFile(location).create()) {
      out.write(new byte[] {1});
    }
    return location;
  }

  private static JobClient start(JobConfig config) throws Exception {
    Configuration conf = TestKit.fixedDelayRestarts(5);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    SpatialIngestJob.build(env, config, false);
    return env.executeAsync("staging-cleanup");
  }

  private static Table awaitTable(JobConfig config) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      try {
        return TestKit.table(config);
      } catch (RuntimeException e) {
        if (System.currentTimeMillis() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private static List<Path> runs(List<Path> stagingDirs) {
    List<Path> runs = new ArrayList<>();
    for (Path d : stagingDirs) {
      if (Files.isDirectory(d)) {
        try (Stream<Path> files = Files.walk(d)) {
          files.filter(f -> SinkFileNames.parseStaging(f.toString()) != null).forEach(runs::add);
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
          // a run deleted while listing: the next barrier looks again
        }
      }
    }
    return runs;
  }

  private static long barrier(Path run) {
    return SinkFileNames.parseStaging(run.toString()).checkpointId();
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

  /** Sends the values at a steady pace (about 400 a second) from a thread of its own. */
  private static final class Producing implements AutoCloseable {
    private final Thread thread;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    Producing(String topic, List<byte[]> values) {
      thread =
          new Thread(
              () -> {
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
                try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                  for (int i = 0; i < values.size(); i++) {
                    producer.send(
                        new ProducerRecord<>(topic, Integer.toString(i).getBytes(), values.get(i)));
                    if (i % 20 == 19) {
                      producer.flush();
                      Thread.sleep(50);
                    }
                  }
                  producer.flush();
                } catch (Exception e) {
                  failure.set(e);
                }
              },
              "staging-cleanup-producer");
      thread.start();
    }

    void awaitDone() throws Exception {
      thread.join(180_000);
      if (failure.get() != null) {
        throw failure.get();
      }
    }

    @Override
    public void close() throws Exception {
      thread.interrupt();
      thread.join(10_000);
    }
  }
}
