package org.spatialingest.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.spatialingest.TableMaintenance;
import org.spatialingest.config.JobConfig;
import org.spatialingest.it.ChildJvm;
import org.spatialingest.it.StandaloneFlinkCluster;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.local.KafkaBacklog;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * One chaos run on real parts: a KRaft broker, a standalone Flink session cluster (JobManager + 2
 * TaskManager processes) running the packaged job jar submitted with {@code flink run}, and a JDBC
 * (SQLite) Iceberg catalog that this process shares with the job as a second client. Produces the
 * input while it injects the planned faults one after the other, each after a random pause, and
 * measures each fault's recovery: from the injection to the first commit of the job after the fault
 * is over, and, when the job stopped reading, until it has committed what the topic held when it
 * ran again. Then waits until the tables hold every record and hands over to {@link ChaosCheck}.
 */
final class ChaosRun {
  static final String TOPIC = "chaos";
  static final String GROUP = "spatial-ingest-chaos";

  /**
   * {@link FaultKind#SECOND_JOB}'s topic, group and sink id (the first job keeps the default id)
   */
  static final String SECOND_TOPIC = "chaos-second";

  static final String SECOND_GROUP = "spatial-ingest-chaos-second";
  static final String SECOND_SINK_ID = "second-job";
  static final int PARTITIONS = 4;
  static final Duration CHECKPOINT_INTERVAL = Duration.ofSeconds(2);
  static final Duration MAX_LATENCY = Duration.ofSeconds(6);
  static final Duration CATALOG_OUTAGE = Duration.ofSeconds(20);
  static final Duration BROKER_DOWN = Duration.ofSeconds(10);

  /** the longest any single fault may take to recover before the run is declared failed */
  static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(5);

  private static final String ENTRY = "org.spatialingest.cli.Main";

  private final ChaosSettings settings;
  private final Path work;
  private final Path build;
  private final Random random;
  private final List<FaultRecord> faults = new ArrayList<>();
  private final List<String> externalIds = new ArrayList<>();
  private ChaosProducer producer;

  /** with {@link FaultKind#SECOND_JOB}: its producer and job, for the whole run */
  private ChaosProducer secondProducer;

  private String secondJobId;

  /**
   * the faults' and the first start's: rows that lived through one may be older at commit by its
   * length
   */
  private final List<ChaosCheck.Outage> outages = new ArrayList<>();

  private CheckpointTriggers triggers;

  private EmbeddedKafka kafka;
  private StandaloneFlinkCluster cluster;
  private Map<String, String> jobKeys;
  private Table table;
  private Table rejects;
  private String catalogUrl;
  private String jobId;
  private int parallelism = 2;
  private int jobsSubmitted;

  /** What happened to one injected fault; {@code recovered - started} is its recovery time. */
  record FaultRecord(FaultKind kind, long startedMillis, long recoveredMillis, String note) {
    long recoveryMillis() {
      return recoveredMillis - startedMillis;
    }
  }

  ChaosRun(ChaosSettings settings, Path work, Path build) {
    this.settings = settings;
    this.work = work;
    this.build = build;
    this.random = new Random(settings.seed());
  }

  ChaosReport run() throws Exception {
    long wallStart = System.currentTimeMillis();
    Path jar = build.resolve("spatial-ingest-flink.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no " + jar + " (run `mvn package` first)");
    }
    List<Path> lib = new ArrayList<>(StandaloneFlinkCluster.distributionLib(build.resolve("lib")));
    lib.add(jdbcDriver(build.resolve("lib"))); // a JDBC catalog's driver goes in Flink's lib/
    Path faultsDir = Files.createDirectories(work.resolve("sink-faults"));
    catalogUrl = "jdbc:sqlite:" + work.resolve("catalog.db");
    Map<String, String> clusterConf = new HashMap<>();
    clusterConf.put("web.checkpoints.history", Integer.toString(CheckpointTriggers.HISTORY));
    clusterConf.putAll(
        Map.of(
            "execution.checkpointing.dir", work.resolve("checkpoints").toUri().toString(),
            "execution.checkpointing.savepoint-dir", work.resolve("savepoints").toUri().toString(),
            "restart-strategy.type", "fixed-delay",
            "restart-strategy.fixed-delay.attempts", "1000000",
            "restart-strategy.fixed-delay.delay", "1 s",
            // a kill -9 is noticed by heartbeat: keep it short so recovery measures the job, not
            // the default 50 s
            "heartbeat.interval", "1000",
            "heartbeat.timeout", "8000",
            "taskmanager.memory.process.size",
                "1408m", // 1152m before the metaspace below grew by 256m
            // what the session overlay gives (k8s/overlays/session): two jobs of ours per
            // TaskManager for the whole run (the second job's and the main one), resubmitted at
            // every rescale and stateless restart; at Flink's 256m one TaskManager hosting five
            // job ids in 8 minutes died of metaspace before the ended jobs' classes were unloaded
            "taskmanager.memory.jvm-metaspace.size", "512m",
            "metrics.fetcher.update-interval", "1000"));
    try (EmbeddedKafka broker = EmbeddedKafka.start(work.resolve("kafka"));
        StandaloneFlinkCluster flink =
            StandaloneFlinkCluster.start(
                work.resolve("flink"),
                lib,
                2,
                2,
                clusterConf,
                List.of("-D" + SinkFaults.TRIGGER_DIR_PROPERTY + "=" + faultsDir));
        CheckpointTriggers polled = new CheckpointTriggers(flink)) {
      kafka = broker;
      cluster = flink;
      triggers = polled;
      kafka.createTopic(TOPIC, PARTITIONS);
      jobKeys = jobKeys();
      submit(jar, null, parallelism);
      awaitRunning(Duration.ofMinutes(3));
      boolean secondJob = settings.faults().contains(FaultKind.SECOND_JOB);
      if (secondJob) {
        kafka.createTopic(SECOND_TOPIC, PARTITIONS);
        secondJobId = submitJob(jar, null, 1, secondJobKeys());
        triggers.follow(secondJobId);
        secondProducer =
            new ChaosProducer(
                kafka.bootstrapServers(),
                SECOND_TOPIC,
                settings.rows() / 4,
                settings.malformedEvery(),
                settings.ratePerSecond() / 4,
                settings.seed() + 1,
                "second-");
        secondProducer.start();
      }

      producer =
          new ChaosProducer(
              kafka.bootstrapServers(),
              TOPIC,
              settings.rows(),
              settings.malformedEvery(),
              settings.ratePerSecond(),
              settings.seed());
      producer.start();
      try {
        long firstRecord = System.currentTimeMillis();
        Catalog catalog = awaitTables(Duration.ofMinutes(3));
        table = catalog.loadTable(Catalogs.tableIdentifier(JobConfig.fromMap(jobKeys)));
        rejects = catalog.loadTable(Catalogs.rejectsTableIdentifier(JobConfig.fromMap(jobKeys)));
        outages.add(
            new ChaosCheck.Outage(
                "job start", firstRecord, awaitCommitAfter(firstRecord, summary -> true)));
        if (secondJobId != null) {
          // the second job starts beside the first on the same loaded TaskManagers: its first
          // checkpoint may come much later than the first job's (seen: 18 s after RUNNING)
          String second = secondJobId;
          outages.add(
              new ChaosCheck.Outage(
                  "second job start",
                  firstRecord,
                  awaitCommitAfter(
                      firstRecord,
                      summary -> second.equals(summary.get(SnapshotSummaryKeys.FLINK_JOB_ID)))));
        }
        for (FaultKind kind : settings.faults()) {
          if (kind == FaultKind.SECOND_JOB) {
            long now = System.currentTimeMillis();
            faults.add(
                new FaultRecord(
                    kind,
                    now,
                    now,
                    "job "
                        + secondJobId
                        + " (topic "
                        + SECOND_TOPIC
                        + ", sink.id "
                        + SECOND_SINK_ID
                        + ", parallelism 1) writes the same tables for the whole run"));
            continue;
          }
          long gap =
              settings.minGap().toMillis()
                  + (long)
                      (random.nextDouble()
                          * (settings.maxGap().toMillis() - settings.minGap().toMillis()));
          Thread.sleep(gap);
          FaultRecord record = inject(kind, jar, faultsDir);
          faults.add(record);
          outages.add(
              new ChaosCheck.Outage(kind.name(), record.startedMillis(), record.recoveredMillis()));
          System.out.printf(
              "chaos: %-24s recovered in %6d ms (%d of %d acknowledged) %s%n",
              kind,
              record.recoveryMillis(),
              producer.acknowledgedCount(),
              settings.rows(),
              record.note());
        }
        producer.finish();
        producer.awaitDone();
        if (secondProducer != null) {
          secondProducer.finish();
          secondProducer.awaitDone();
          externalIds.addAll(secondProducer.acceptedIds());
        }
      } finally {
        producer.close();
        if (secondProducer != null) {
          secondProducer.close();
        }
      }
      awaitCaughtUp(TOPIC, GROUP, Duration.ofMinutes(10));
      if (secondProducer != null) {
        awaitCaughtUp(SECOND_TOPIC, SECOND_GROUP, Duration.ofMinutes(10));
      }
      // a late duplicate (a batch committed twice) would land within one more commit round: every
      // batch the job holds is committed within L + C
      Thread.sleep(MAX_LATENCY.toMillis() + CHECKPOINT_INTERVAL.toMillis());
      for (String job : secondJobId == null ? List.of(jobId) : List.of(jobId, secondJobId)) {
        long failures = 0;
        long last = 0;
        for (var entry :
            cluster.get("/jobs/" + job + "/exceptions").path("exceptionHistory").path("entries")) {
          failures++;
          last = Math.max(last, entry.path("timestamp").asLong());
        }
        System.out.printf(
            "chaos: at the check, job %s is %s after %d failures, the last at %s%n",
            job, cluster.jobState(job), failures, java.time.Instant.ofEpochMilli(last));
      }
      ChaosCheck.Result check =
          ChaosCheck.run(
              table,
              rejects,
              producer.acknowledged(),
              producer.malformedNumbers(),
              malformed(),
              externalIds,
              outages,
              triggers::triggeredAt,
              MAX_LATENCY.toMillis() + CHECKPOINT_INTERVAL.toMillis(),
              settings.faults().contains(FaultKind.PROPERTY_APPEARS)
                  ? producer.withProperty()
                  : null);
      cancelJob();
      if (secondJobId != null) {
        cluster.cancel(secondJobId);
      }
      return new ChaosReport(settings, faults, check, System.currentTimeMillis() - wallStart);
    }
  }

  private FaultRecord inject(FaultKind kind, Path jar, Path faultsDir) throws Exception {
    String injectedInto = jobId;
    long lastFailureBefore = lastFailureMillis();
    long start = System.currentTimeMillis();
    String note = "";
    switch (kind) {
      case TASKMANAGER_KILL -> {
        // a TaskManager the job runs on: killing an idle one (a job of parallelism 2 may fit on
        // one) tests nothing
        List<String> hosting = new ArrayList<>();
        for (var vertex : cluster.get("/jobs/" + jobId).path("vertices")) {
          String path =
              "/jobs/" + jobId + "/vertices/" + vertex.path("id").asText() + "/taskmanagers";
          for (var tm : cluster.get(path).path("taskmanagers")) {
            hosting.add(tm.path("taskmanager-id").asText());
          }
        }
        List<ChildJvm> live = new ArrayList<>();
        for (ChildJvm tm : cluster.liveTaskManagers()) {
          if (hosting.contains(cluster.resourceId(tm))) {
            live.add(tm);
          }
        }
        if (live.isEmpty()) {
          throw new IllegalStateException(
              "no live TaskManager process runs job " + jobId + " (it runs on " + hosting + ")");
        }
        ChildJvm victim = live.get(random.nextInt(live.size()));
        cluster.killTaskManager(victim);
        note =
            "killed "
                + victim.name()
                + " (pid "
                + victim.pid()
                + "), started "
                + cluster.startTaskManager();
      }
      case SINK_AFTER_MEMORY_FLUSH,
          SINK_AFTER_FILE_WRITTEN,
          SINK_AFTER_STAGING,
          SINK_BEFORE_COMMIT,
          SINK_AFTER_COMMIT -> {
        Path trigger = faultsDir.resolve(kind.sinkPoint.name());
        Files.writeString(trigger, "armed by the chaos run");
        awaitTriggered(trigger, Duration.ofMinutes(2));
        start = System.currentTimeMillis();
      }
      case SINK_AT_END_OF_INPUT -> {
        Path trigger = faultsDir.resolve(kind.sinkPoint.name());
        Files.writeString(trigger, "armed by the chaos run");
        try {
          String savepoint =
              cluster.stopWithSavepoint(
                  jobId,
                  work.resolve("savepoints").toUri().toString(),
                  true,
                  Duration.ofMinutes(3));
          // the fault did not fire: the job drained and finished; continue from its savepoint
          Files.deleteIfExists(trigger);
          note = "NOT REACHED: the drain completed (" + savepoint + ")";
          submit(jar, savepoint, parallelism);
        } catch (StandaloneFlinkCluster.SavepointFailed expected) {
          awaitTriggered(trigger, Duration.ofSeconds(30));
          note = "the drain failed at the writers' end of input; the job failed over";
        }
      }
      case PROPERTY_APPEARS -> {
        producer.startProperty();
        note = "point records carry " + ChaosProducer.NEW_PROPERTY + " from now on";
      }
      case BROKER_RESTART -> {
        kafka.stopBroker();
        Thread.sleep(BROKER_DOWN.toMillis());
        kafka.startBroker();
      }
      case CATALOG_OUTAGE -> CatalogOutage.hold(catalogUrl, CATALOG_OUTAGE);
      case CONCURRENT_WRITER -> {
        List<String> ids = new ConcurrentWriter(table).append("ext" + faults.size(), 5, 200, 1_500);
        externalIds.addAll(ids);
        note = ids.size() + " rows in 5 commits";
      }
      case COMPACTION -> {
        // as a maintenance job would: a rewrite that loses every commit race to the job's commits
        // (Iceberg retries 4 times; a loaded machine makes the rewrite slow) is run again
        int attempt = 1;
        int rewritten;
        while (true) {
          try {
            rewritten =
                TableMaintenance.rewriteDataFiles(
                    StreamExecutionEnvironment.createLocalEnvironment(1), table);
            break;
          } catch (org.apache.iceberg.exceptions.CommitFailedException e) {
            if (attempt++ == 5) {
              throw e;
            }
          }
        }
        note =
            "rewrote "
                + rewritten
                + " data files"
                + (attempt > 1 ? " (attempt " + attempt + ")" : "");
      }
      case SAVEPOINT_RESCALE -> {
        String savepoint =
            cluster.stopWithSavepoint(
                jobId, work.resolve("savepoints").toUri().toString(), false, Duration.ofMinutes(3));
        awaitState("FINISHED", Duration.ofMinutes(1));
        int from = parallelism;
        parallelism = parallelism == 2 ? 3 : 2;
        submit(jar, savepoint, parallelism);
        note = "p " + from + " -> " + parallelism;
      }
      case STATELESS_RESTART -> {
        cancelJob();
        submit(jar, null, parallelism);
        note = "same group " + GROUP;
      }
      default -> throw new IllegalArgumentException(kind.toString());
    }
    if (kind == FaultKind.TASKMANAGER_KILL
        || kind.sinkPoint != null && !note.startsWith("NOT REACHED")) {
      // the job must notice (a killed process only by heartbeat): recovery is over after its
      // restart, not before
      ChildJvm.await(
          "job " + jobId + " to fail after " + kind,
          RECOVERY_TIMEOUT,
          () -> lastFailureMillis() > lastFailureBefore);
    }
    long faultOver = System.currentTimeMillis();
    awaitRunning(RECOVERY_TIMEOUT);
    long restored = restoredCheckpointId();
    // what was in the topic once the job ran again: a job that stopped reading must read it all
    // (and what its restore replays) before rows wait only L + C again
    Map<TopicPartition, Long> backlogEnd = endOffsets(TOPIC);
    boolean stoppedReading =
        !jobId.equals(injectedInto)
            || kind == FaultKind.BROKER_RESTART
            || kind == FaultKind.CATALOG_OUTAGE;
    if (jobId.equals(injectedInto)) {
      long failures = failuresSince(lastFailureBefore);
      stoppedReading |= failures > 0;
      note =
          (note.isEmpty() ? "" : note + "; ")
              + failures
              + (failures == 1 ? " job failure" : " job failures");
    }
    // Recovered when the job commits work of its own again: a batch of a checkpoint it took after
    // it was running. The first commit after a restart is often the failed job's last batch, which
    // the restored committer commits again at once (a commit failed before, or its notification was
    // lost): it proves the catalog is back, not that the rows the fault held are being committed.
    long firstCommit = awaitCommitAfter(faultOver, summary -> true);
    String job = jobId;
    long recovered =
        awaitCommitAfter(
            faultOver,
            summary ->
                job.equals(summary.get(SnapshotSummaryKeys.FLINK_JOB_ID))
                    && Long.parseLong(summary.get(SnapshotSummaryKeys.CHECKPOINT_ID)) > restored);
    if (recovered > firstCommit) {
      note +=
          "; the first commit, "
              + (recovered - firstCommit)
              + " ms earlier, was a batch of the failed job (restored from checkpoint "
              + restored
              + ")";
    }
    if (stoppedReading) {
      long caughtUp = awaitCommittedUpTo(GROUP, backlogEnd);
      if (caughtUp > recovered) {
        note += "; caught up with the backlog " + (caughtUp - recovered) + " ms after that";
        recovered = caughtUp;
      }
    }
    if (secondJobId != null
        && (failuresSince(secondJobId, lastFailureBefore) > 0
            || kind == FaultKind.BROKER_RESTART
            || kind == FaultKind.CATALOG_OUTAGE)) {
      // the second job shares the TaskManagers (and a sink fault may fire in it): its rows
      // lived through the same outage until it, too, had read its backlog
      awaitRunning(secondJobId, RECOVERY_TIMEOUT);
      long caughtUp = awaitCommittedUpTo(SECOND_GROUP, endOffsets(SECOND_TOPIC));
      if (caughtUp > recovered) {
        note += "; the second job caught up " + (caughtUp - recovered) + " ms after that";
        recovered = caughtUp;
      }
    }
    note += "; " + checkpointStats() + ", load average " + loadAverage();
    return new FaultRecord(kind, start, recovered, note);
  }

  /** The topic's end offsets now. */
  private Map<TopicPartition, Long> endOffsets(String topic) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> end = new HashMap<>();
      admin
          .listOffsets(latest)
          .all()
          .get()
          .forEach((partition, info) -> end.put(partition, info.offset()));
      return end;
    }
  }

  /**
   * Waits until the consumer group's offsets, which the sink sets to the table's positions after
   * each commit, reach {@code target}; returns when it saw them there (polled every 250 ms, and the
   * sink publishes them right after its commit, so at most a poll later than that commit).
   */
  private long awaitCommittedUpTo(String group, Map<TopicPartition, Long> target) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      ChildJvm.await(
          "the group " + group + " to reach " + target,
          RECOVERY_TIMEOUT,
          () -> {
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            for (var e : target.entrySet()) {
              OffsetAndMetadata at = committed.get(e.getKey());
              if (e.getValue() > 0 && (at == null || at.offset() < e.getValue())) {
                return false;
              }
            }
            return true;
          });
    }
    return System.currentTimeMillis();
  }

  /**
   * The current job's checkpoints so far (Flink's REST API): whether the job, rather than a fault,
   * held rows back.
   */
  private String checkpointStats() {
    try {
      var cp = cluster.get("/jobs/" + jobId + "/checkpoints");
      var e2e = cp.path("summary").path("end_to_end_duration");
      return String.format(
          Locale.ROOT,
          "job checkpoints %d completed, %d failed, end to end p50 %d ms, max %d ms",
          cp.path("counts").path("completed").asLong(),
          cp.path("counts").path("failed").asLong(),
          e2e.path("p50").asLong(),
          e2e.path("max").asLong());
    } catch (Exception e) {
      return "job checkpoints unknown (" + e.getMessage() + ")";
    }
  }

  /** The machine's 1-minute load average (Linux), or "?". */
  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (Exception e) {
      return "?";
    }
  }

  /**
   * The checkpoint the current job last restored from (after a failure or at submission), or -1.
   */
  private long restoredCheckpointId() throws Exception {
    var restored = cluster.get("/jobs/" + jobId + "/checkpoints").path("latest").path("restored");
    return restored.hasNonNull("id") ? restored.path("id").asLong() : -1;
  }

  private Map<String, String> jobKeys() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("kafka.bootstrap-servers", kafka.bootstrapServers());
    m.put("kafka.topic", TOPIC);
    m.put("kafka.group-id", GROUP);
    m.put("kafka.starting-offsets", "table");
    m.put("catalog.type", "jdbc");
    m.put("catalog.uri", catalogUrl);
    m.put("catalog.warehouse", work.resolve("warehouse").toUri().toString());
    m.put("checkpoint.interval", CHECKPOINT_INTERVAL.toSeconds() + "s");
    m.put("sink.max-latency", MAX_LATENCY.toSeconds() + "s");
    // small enough that writers also close files by memory within L (so the memory-flush fault
    // point is reached):
    // about a third of what a writer of 3 buffers in L at the run's rate, ~300 bytes a row
    long memoryKb =
        Math.max(
            32, (long) (settings.ratePerSecond() / 3 * MAX_LATENCY.toSeconds() * 300 / 3 / 1000));
    m.put("sink.memory-budget", memoryKb + "KB");
    m.put("sink.target-file-size", "8MB");
    if (settings.faults().contains(FaultKind.PROPERTY_APPEARS)) {
      m.put("input.typed-properties", "auto");
    }
    return m;
  }

  private void submit(Path jar, String savepoint, int p) throws Exception {
    jobId = submitJob(jar, savepoint, p, jobKeys);
    triggers.follow(jobId);
  }

  /** The second job's keys: the first's, with its own topic, group and sink id. */
  private Map<String, String> secondJobKeys() {
    Map<String, String> m = new LinkedHashMap<>(jobKeys);
    m.put("kafka.topic", SECOND_TOPIC);
    m.put("kafka.group-id", SECOND_GROUP);
    m.put("sink.id", SECOND_SINK_ID);
    return m;
  }

  private String submitJob(Path jar, String savepoint, int p, Map<String, String> keys)
      throws Exception {
    List<String> options = new ArrayList<>(List.of("-p", Integer.toString(p)));
    if (savepoint != null) {
      options.addAll(List.of("-s", savepoint));
    }
    List<String> args = new ArrayList<>(List.of("run"));
    keys.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
    StandaloneFlinkCluster.Submission submission =
        cluster.submitDetached(options, jar, ENTRY, args);
    if (submission.exitCode() != 0 || submission.jobId() == null) {
      throw new AssertionError(
          "flink run failed ("
              + submission.exitCode()
              + "):\n"
              + submission.output()
              + "\n"
              + cluster.logTail("client", 60));
    }
    jobsSubmitted++;
    return submission.jobId();
  }

  private void cancelJob() throws Exception {
    cluster.cancel(jobId);
    awaitState("CANCELED", Duration.ofMinutes(2));
  }

  /**
   * When the current job (or the second job, whose tasks share the TaskManagers and so may reach a
   * sink fault first) last failed (its exception history, per the REST API), or 0.
   */
  private long lastFailureMillis() throws Exception {
    long last = 0;
    for (String job : secondJobId == null ? List.of(jobId) : List.of(jobId, secondJobId)) {
      for (var entry :
          cluster.get("/jobs/" + job + "/exceptions").path("exceptionHistory").path("entries")) {
        last = Math.max(last, entry.path("timestamp").asLong());
      }
    }
    return last;
  }

  /** Failures of the current job after {@code millis}. */
  private long failuresSince(long millis) throws Exception {
    return failuresSince(jobId, millis);
  }

  private long failuresSince(String jobId, long millis) throws Exception {
    long n = 0;
    for (var entry :
        cluster.get("/jobs/" + jobId + "/exceptions").path("exceptionHistory").path("entries")) {
      n += entry.path("timestamp").asLong() > millis ? 1 : 0;
    }
    return n;
  }

  private void awaitState(String state, Duration timeout) throws Exception {
    ChildJvm.await(
        "job " + jobId + " " + state, timeout, () -> state.equals(cluster.jobState(jobId)));
  }

  /**
   * RUNNING with every task running (a job restarting after a failure is RUNNING with tasks still
   * deploying).
   */
  private void awaitRunning(Duration timeout) throws Exception {
    awaitRunning(jobId, timeout);
  }

  private void awaitRunning(String jobId, Duration timeout) throws Exception {
    ChildJvm.await(
        "job " + jobId + " running with all tasks",
        timeout,
        () -> {
          String state = cluster.jobState(jobId);
          if ("FAILED".equals(state) || "CANCELED".equals(state) || "FINISHED".equals(state)) {
            throw new AssertionError(
                "job "
                    + jobId
                    + " is "
                    + state
                    + ":\n"
                    + cluster.get("/jobs/" + jobId + "/exceptions"));
          }
          if (!"RUNNING".equals(state)) {
            return false;
          }
          for (var vertex : cluster.get("/jobs/" + jobId).path("vertices")) {
            if (!"RUNNING".equals(vertex.path("status").asText())) {
              return false;
            }
          }
          return true;
        });
  }

  private Catalog awaitTables(Duration timeout) throws Exception {
    JobConfig config = JobConfig.fromMap(jobKeys);
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    ChildJvm.await(
        "the job to create its tables",
        timeout,
        () ->
            catalog.tableExists(Catalogs.tableIdentifier(config))
                && catalog.tableExists(Catalogs.rejectsTableIdentifier(config)));
    return catalog;
  }

  /**
   * Waits for a commit of the job to the telemetry table after {@code millis} whose snapshot
   * summary {@code accept}s; returns the time of the first such commit.
   */
  private long awaitCommitAfter(long millis, Predicate<Map<String, String>> accept)
      throws Exception {
    long[] at = {0};
    ChildJvm.await(
        "a commit of the job after " + millis,
        RECOVERY_TIMEOUT,
        () -> {
          table.refresh(); // fails while the catalog is unavailable: retried
          Snapshot current = table.currentSnapshot();
          if (current == null) {
            return false;
          }
          at[0] = 0;
          for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
            if (s.timestampMillis() <= millis) {
              break;
            }
            if (s.summary().containsKey(SnapshotSummaryKeys.BATCH_ID) && accept.test(s.summary())) {
              at[0] = s.timestampMillis(); // ancestors go back in time: the last found is the first
            }
          }
          return at[0] > 0;
        });
    return at[0];
  }

  private void awaitTriggered(Path trigger, Duration timeout) throws Exception {
    try {
      ChildJvm.await(
          "the sink to reach " + trigger.getFileName(), timeout, () -> !Files.exists(trigger));
    } catch (AssertionError e) {
      Files.deleteIfExists(trigger);
      throw e;
    }
  }

  /**
   * Until the consumer group's offsets, which the sink sets to the table's positions, reach the
   * topic's end.
   */
  /** The malformed records of both jobs' producers (by value: they differ by id). */
  private java.util.Set<String> malformed() {
    java.util.Set<String> all = new java.util.HashSet<>(producer.malformed());
    if (secondProducer != null) {
      all.addAll(secondProducer.malformed());
    }
    return all;
  }

  private void awaitCaughtUp(String topic, String group, Duration timeout) throws Exception {
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      ChildJvm.await(
          "the tables to hold every record of " + topic,
          timeout,
          () -> {
            KafkaBacklog.Offsets offsets = KafkaBacklog.read(admin, topic, group);
            return offsets.records() > 0 && offsets.unread() == 0;
          });
    }
  }

  int jobsSubmitted() {
    return jobsSubmitted;
  }

  private static Path jdbcDriver(Path targetLib) throws Exception {
    try (Stream<Path> jars = Files.list(targetLib)) {
      return jars.filter(p -> p.getFileName().toString().startsWith("sqlite-jdbc-"))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no sqlite-jdbc jar in " + targetLib));
    }
  }
}
