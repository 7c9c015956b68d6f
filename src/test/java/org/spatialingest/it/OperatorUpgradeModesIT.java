package org.spatialingest.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.sink.MixedInput;
import org.spatialingest.table.Catalogs;

/**
 * The three {@code upgradeMode}s of the Flink Kubernetes Operator, done by hand on a standalone
 * session cluster with the packaged jar and {@code flink run}: each stops a running job while rows
 * wait in the sink, then starts the job again with another parallelism and a new typed property
 * ({@code input.typed-properties} gains {@code pad:string}), and every produced record must then be
 * exactly once in the table or the rejects table.
 *
 * <ul>
 *   <li>{@code savepoint}: stop-with-savepoint, {@code flink run -s <savepoint>}.
 *   <li>{@code last-state}: the operator loses the JobManager and restarts from the latest
 *       checkpoint in its HA metadata; here: cancel with checkpoints retained on cancellation,
 *       {@code flink run -s <latest checkpoint>}.
 *   <li>{@code stateless}: cancel, {@code flink run} without state; the job resumes from the
 *       positions the table records ({@code kafka.starting-offsets=table}).
 * </ul>
 *
 * One cluster runs the three modes one after the other, each on its own topic and warehouse.
 */
class OperatorUpgradeModesIT {
  private static final String ENTRY = "org.spatialingest.cli.Main";
  private static final String PAD = "x".repeat(60);

  enum UpgradeMode {
    SAVEPOINT,
    LAST_STATE,
    STATELESS
  }

  @Test
  void eachUpgradeModeKeepsEveryRecordExactlyOnceAcrossAChangedConfig(@TempDir Path tmp)
      throws Exception {
    Path jobJar = FlinkRunClusterIT.BUILD.resolve("spatial-ingest-flink.jar");
    assertThat(jobJar).as("cluster jar (run `mvn package` first)").isRegularFile();
    List<Path> lib = StandaloneFlinkCluster.distributionLib(FlinkRunClusterIT.BUILD.resolve("lib"));
    try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
        StandaloneFlinkCluster cluster =
            StandaloneFlinkCluster.start(
                tmp.resolve("flink"),
                lib,
                4,
                Map.of(
                    "execution.checkpointing.dir",
                    tmp.resolve("checkpoints").toUri().toString(),
                    // what last-state needs: the latest checkpoint outlives the stopped job
                    CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION.key(),
                    ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION.name(),
                    "restart-strategy.type",
                    "none",
                    // six jobs of ours on one TaskManager: at the default 256m of metaspace it ran
                    // out at the sixth and the TaskManager shut down
                    "taskmanager.memory.jvm-metaspace.size",
                    "768m",
                    "taskmanager.memory.process.size",
                    "2048m"))) {
      for (UpgradeMode mode : UpgradeMode.values()) {
        long start = System.nanoTime();
        upgrade(mode, kafka, cluster, jobJar, tmp.resolve(mode.name().toLowerCase()));
        System.out.printf(
            "upgrade mode %s: %d ms%n", mode, (System.nanoTime() - start) / 1_000_000);
      }
    }
  }

  private static void upgrade(
      UpgradeMode mode, EmbeddedKafka kafka, StandaloneFlinkCluster cluster, Path jobJar, Path dir)
      throws Exception {
    String topic = "upgrade-" + mode.name().toLowerCase().replace('_', '-');
    kafka.createTopic(topic, 3);
    Map<String, String> keys = new LinkedHashMap<>();
    keys.put("kafka.bootstrap-servers", kafka.bootstrapServers());
    keys.put("kafka.topic", topic);
    keys.put("kafka.group-id", topic);
    keys.put("catalog.type", "hadoop");
    keys.put("catalog.warehouse", dir.resolve("warehouse").toUri().toString());
    keys.put("checkpoint.interval", "1s");
    keys.put("sink.max-latency", "2s");
    keys.put("sink.memory-budget", "8MB");
    JobConfig config = JobConfig.fromMap(keys);

    MixedInput before = MixedInput.of("a", 2_000, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, before.values());
    String first = submit(cluster, jobJar, keys, 2, null);
    cluster.awaitRunning(first, Duration.ofSeconds(60));
    ChildJvm.await(
        "a first commit to the table of " + mode,
        Duration.ofSeconds(90),
        () -> {
          cluster.assertRunning(first);
          return !TestKit.rows(TestKit.table(config)).isEmpty();
        });
    // more input while the job runs: the stop finds rows in flight and waiting in the sink
    MixedInput during = MixedInput.of("b", 1_000, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, during.values());

    String restoreFrom =
        switch (mode) {
          case SAVEPOINT ->
              cluster.stopWithSavepoint(
                  first,
                  dir.resolve("savepoints").toUri().toString(),
                  false,
                  Duration.ofSeconds(60));
          case LAST_STATE -> {
            cancel(cluster, first);
            String checkpoint =
                cluster
                    .get("/jobs/" + first + "/checkpoints")
                    .path("latest")
                    .path("completed")
                    .path("external_path")
                    .asText(null);
            assertThat(checkpoint)
                .as("latest retained checkpoint of the cancelled job")
                .isNotNull();
            yield checkpoint;
          }
          case STATELESS -> {
            cancel(cluster, first);
            yield null;
          }
        };
    ChildJvm.await(
        "job " + first + " stopped",
        Duration.ofSeconds(60),
        () -> !"RUNNING".equals(cluster.jobState(first)));

    MixedInput after = MixedInput.of("c", 1_000, 30, 50);
    TestKit.produceValues(kafka.bootstrapServers(), topic, after.values());
    MixedInput all = before.plus(during).plus(after);
    Map<String, String> changed = new LinkedHashMap<>(keys);
    changed.put("input.typed-properties", "pad:string");
    int parallelism = mode == UpgradeMode.LAST_STATE ? 1 : 3;
    String second = submit(cluster, jobJar, changed, parallelism, restoreFrom);
    cluster.awaitRunning(second, Duration.ofSeconds(60));

    Set<Integer> parallelisms = new TreeSet<>();
    for (JsonNode v : cluster.get("/jobs/" + second).path("vertices")) {
      parallelisms.add(v.path("parallelism").asInt());
    }
    assertThat(parallelisms).as("vertex parallelisms of the upgraded job").contains(parallelism);
    JsonNode restored = cluster.get("/jobs/" + second + "/checkpoints").path("latest");
    if (restoreFrom == null) {
      assertThat(restored.path("restored").isMissingNode() || restored.path("restored").isNull())
          .as("a stateless start restores nothing: %s", restored)
          .isTrue();
    } else {
      assertThat(restored.path("restored").path("external_path").asText())
          .as("the upgraded job restored from what the stop left")
          .isEqualTo(restoreFrom);
    }

    JobConfig upgraded = JobConfig.fromMap(changed);
    Table rejects =
        Catalogs.catalogLoader(upgraded)
            .loadCatalog()
            .loadTable(Catalogs.rejectsTableIdentifier(upgraded));
    ChildJvm.await(
        all.rows().size() + " rows and " + all.rejects().size() + " rejects of " + mode,
        Duration.ofSeconds(120),
        () -> {
          cluster.assertRunning(second);
          rejects.refresh();
          return TestKit.rows(TestKit.table(upgraded)).size() >= all.rows().size()
              && TestKit.rows(rejects).size() >= all.rejects().size();
        });
    Thread.sleep(2_000); // a late duplicate would show up in the next commits
    cancel(cluster, second);

    all.assertExactlyOnceIn(upgraded);
    Table table = TestKit.table(upgraded);
    assertThat(table.schema().findField("pad"))
        .as("the new typed property's column")
        .isNotNull()
        .satisfies(f -> assertThat(f.isOptional()).isTrue())
        .satisfies(f -> assertThat(f.type()).isEqualTo(Types.StringType.get()));
    List<Object> padsAfter = new ArrayList<>();
    for (Record r : TestKit.rows(table)) {
      if (((String) r.getField("id")).startsWith("c")) {
        padsAfter.add(r.getField("pad"));
      }
    }
    assertThat(padsAfter)
        .as("the typed property of rows produced after the upgrade")
        .hasSize(after.rows().size())
        .containsOnly(PAD);
  }

  private static String submit(
      StandaloneFlinkCluster cluster,
      Path jobJar,
      Map<String, String> keys,
      int parallelism,
      String restoreFrom)
      throws Exception {
    List<String> options = new ArrayList<>(List.of("-p", Integer.toString(parallelism)));
    if (restoreFrom != null) {
      options.addAll(List.of("-s", restoreFrom));
    }
    List<String> args = new ArrayList<>(List.of("run"));
    keys.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
    StandaloneFlinkCluster.Submission submission =
        cluster.submitDetached(options, jobJar, ENTRY, args);
    assertThat(submission.exitCode())
        .as(
            "flink run exit code; output:\n%s\nclient log:\n%s",
            submission.output(), cluster.logTail("client", 60))
        .isZero();
    assertThat(submission.jobId()).as("JobID printed by flink run").isNotNull();
    return submission.jobId();
  }

  private static void cancel(StandaloneFlinkCluster cluster, String jobId) throws Exception {
    cluster.cancel(jobId);
    ChildJvm.await(
        "job " + jobId + " CANCELED",
        Duration.ofSeconds(60),
        () -> "CANCELED".equals(cluster.jobState(jobId)));
  }
}
