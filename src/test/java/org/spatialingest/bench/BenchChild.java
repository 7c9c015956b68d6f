package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.DistributionMode;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.RewriteDataFiles;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;
import org.apache.iceberg.flink.sink.IcebergSink;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.tools.SinkWrittenTables;

/**
 * One measured run in its own JVM (so peak heap is per run) on its own {@link ChildCluster}
 * (file-system checkpoint storage, REST on loopback) and warehouse. Same source, transform,
 * parallelism and checkpointing for both variants; only the sink differs:
 *
 * <ul>
 *   <li>{@code A}: {@link SpatialIngestJob#sink} (our bounded sink, policy from the job keys);
 *   <li>{@code AC}: as {@code A} without object reuse (Flink copies each record between chained
 *       operators; every other variant runs with it, as {@link SpatialIngestJob#build} does);
 *   <li>{@code AN}: as {@code A} with {@code sink.distribution=none}: no exchange, each writer
 *       chained to its transform subtask, every writer writing every partition;
 *   <li>{@code B}: Iceberg's {@code IcebergSink.forRowData(rows).tableLoader(..).append()} into a
 *       table created by the same {@link TableBootstrap#ensureTable};
 *   <li>{@code BT}: as {@code B}, on a table with {@code write.target-file-size-bytes} = T, so that
 *       it rolls its files at T as ours closes them (B alone closes one file per writer and
 *       checkpoint, whatever T);
 *   <li>{@code B1}: as {@code B}, on a table with {@code parquet.enable.dictionary=false};
 *   <li>{@code F}: the floor, a {@code DiscardingSink} (same source and transform, nothing
 *       written);
 *   <li>{@code A0}-{@code A9}: as {@code A}, run by the orchestrator on other builds' main classes.
 * </ul>
 *
 * An {@link ArrivalProbe} after the source counts the bytes arriving per checkpoint interval. Phase
 * {@code live}: unbounded source; writes a ready file once the job runs, then waits for a line on
 * stdin (or its end) and stops the job with a draining savepoint (every produced record gets
 * committed). Phase {@code throughput}: bounded source over the backlog.
 *
 * <p>Every wait is bounded ({@link PhaseGuard}) and a restart of the job fails the run ({@link
 * JobMonitor}): then, or on any other failure, the child writes the reason to {@code
 * <name>.failure} next to the result and exits with 2.
 *
 * <p>Arguments: {@code A|A0|B|F live|throughput <result.json> <ready-file> <parallelism>
 * <phase-timeout-ms> <stop-wait-ms> <warm-up-jobs> key=value...} (job keys); {@code stop-wait-ms}
 * bounds the live phase's wait for its stop request; a throughput child first runs {@code
 * warm-up-jobs} twins of its job to their end ({@code warmUp}).
 */
public final class BenchChild {
  /**
   * Job key the orchestrator passes with the rows the table must hold at the end (the produced
   * records); taken out before the job's config is read.
   */
  static final String EXPECTED_ROWS_KEY = "bench.expected-rows";

  /** Job key: how long a compacting job may take to make its table query-ready (ms). */
  static final String QUERY_READY_TIMEOUT_KEY = "bench.query-ready-timeout-ms";

  /** A topic holding the first records of the backlog, for the warm-up jobs (absent: the same). */
  static final String WARMUP_TOPIC_KEY = "bench.warmup-topic";

  /** How many records {@link #WARMUP_TOPIC_KEY} holds. */
  static final String WARMUP_ROWS_KEY = "bench.warmup-rows";

  /**
   * A compacting job whose table got neither fewer nor larger files over this many rewrites is
   * reported as never query-ready without waiting out {@code query-ready-timeout}.
   */
  static final int STALLED_AFTER_REWRITES = 3;

  /** How often a compacting job's table is looked at. */
  static final long POLL_MS = 250;

  /**
   * BRC's compaction schedule: Iceberg's documented example ({@code scheduleOnCommitCount(10)}),
   * and an interval so that the last commits of a bounded input are compacted too.
   */
  static final int COMPACT_EVERY_COMMITS = 10;

  private BenchChild() {}

  public static void main(String[] args) {
    // what Iceberg's maintenance does (plans, rewrites, commits, errors) goes to the child's log
    org.apache.logging.log4j.core.config.Configurator.setLevel(
        "org.apache.iceberg.flink.maintenance", org.apache.logging.log4j.Level.INFO);
    Path resultFile = Path.of(args[2]);
    int exit = 0;
    try {
      run(args, resultFile);
    } catch (Throwable t) {
      String message = t instanceof PhaseFailure ? t.getMessage() : t.toString();
      System.err.println("BENCH CHILD FAILED: " + message);
      t.printStackTrace();
      try {
        Files.writeString(ChildJvm.failureFile(resultFile), message);
      } catch (IOException e) {
        System.err.println("could not write the failure file: " + e);
      }
      exit = 2;
    }
    System.exit(exit); // MiniCluster and Kafka client threads are not all daemons
  }

  private static void run(String[] args, Path resultFile) throws Exception {
    try (HeapWatcher heap = new HeapWatcher()) {
      String variant = args[0];
      String phase = args[1];
      Path readyFile = Path.of(args[3]);
      int parallelism = Integer.parseInt(args[4]);
      Duration phaseTimeout = Duration.ofMillis(Long.parseLong(args[5]));
      Duration stopWait = Duration.ofMillis(Long.parseLong(args[6]));
      int warmups = Integer.parseInt(args[7]);
      Map<String, String> keys = new LinkedHashMap<>();
      for (int i = 8; i < args.length; i++) {
        int eq = args[i].indexOf('=');
        keys.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      }
      // the harness's own keys, not the job's
      String expected = keys.remove(EXPECTED_ROWS_KEY);
      long expectedRows = expected == null ? 0 : Long.parseLong(expected);
      String readyTimeout = keys.remove(QUERY_READY_TIMEOUT_KEY);
      Duration queryReadyTimeout =
          Duration.ofMillis(readyTimeout == null ? 0 : Long.parseLong(readyTimeout));
      String warmupTopic = keys.remove(WARMUP_TOPIC_KEY);
      String warmupRows = keys.remove(WARMUP_ROWS_KEY);
      JobConfig config = JobConfig.fromMap(keys);
      long target = config.targetFileBytes();
      boolean live = phase.equals("live");
      boolean compacts = compacts(variant);
      String name = phase + " " + variant;

      // twice the slots the job's parallelism needs: IcebergSink with its range shuffle puts part
      // of
      // its job in a slot sharing group of its own and never got scheduled on p slots; idle slots
      // cost no CPU, and every variant gets the same cluster
      try (ChildCluster cluster =
          ChildCluster.start(
              2 * parallelism,
              resultFile.resolveSibling(
                  "checkpoints-" + resultFile.getFileName().toString().replace(".json", "")),
              live ? JobMonitor.LIVE_PERIOD : JobMonitor.THROUGHPUT_PERIOD)) {
        for (int w = 1; !live && w <= warmups; w++) {
          Map<String, String> warmupKeys = new LinkedHashMap<>(keys);
          if (warmupTopic != null) {
            warmupKeys.put("kafka.topic", warmupTopic);
          }
          warmUp(
              cluster,
              variant,
              parallelism,
              warmupKeys,
              name + " warm-up " + w,
              phaseTimeout,
              warmupRows == null ? expectedRows : Long.parseLong(warmupRows),
              queryReadyTimeout);
          heap.reset();
        }
        long submitted = System.nanoTime();
        JobClient job = submit(cluster, variant, phase, parallelism, config);
        JobRest rest = new JobRest(cluster.restAddress(), job.getJobID());
        JobMonitor monitor = new JobMonitor(rest, cluster.monitorPeriod());
        PhaseGuard guard = new PhaseGuard(name, job, monitor);
        Table table = null;
        long drainMs = 0;
        long jobRuntimeMs = -1;
        long[] compacted = null; // a compacting job's moments, see awaitCompacted
        if (live) {
          guard.awaitRunning(phaseTimeout);
          reportConsumed(ChildJvm.consumedFile(resultFile));
          Files.writeString(readyFile, "ready");
          guard.await(stopRequest(), stopWait, "the stop request from the orchestrator");
          long stop = System.nanoTime();
          if (compacts) {
            // everything is committed every C; the compaction needs the job running to merge it
            table = loadTable(config);
            compacted =
                awaitCompacted(
                    guard,
                    table,
                    expectedRows,
                    target,
                    phaseTimeout,
                    queryReadyTimeout,
                    name,
                    false);
            guard.cancel();
          } else {
            Path savepoints = Files.createTempDirectory(resultFile.getParent(), "savepoint-");
            guard.await(
                job.stopWithSavepoint(
                    true, savepoints.toUri().toString(), SavepointFormatType.CANONICAL),
                phaseTimeout,
                "the draining stop-with-savepoint");
            JobExecutionResult result =
                guard.await(
                    job.getJobExecutionResult(), phaseTimeout, "the end of the drained job");
            jobRuntimeMs = result.getNetRuntime(TimeUnit.MILLISECONDS);
          }
          drainMs = (System.nanoTime() - stop) / 1_000_000;
        } else if (compacts) {
          table = loadTable(config);
          compacted =
              awaitCompacted(
                  guard, table, expectedRows, target, phaseTimeout, queryReadyTimeout, name, false);
        } else {
          JobExecutionResult result =
              guard.await(
                  job.getJobExecutionResult(),
                  phaseTimeout,
                  "the end of the bounded job (the whole backlog read and committed)");
          jobRuntimeMs = result.getNetRuntime(TimeUnit.MILLISECONDS);
        }
        // a compacting job ends (for the throughput figures) when every row is committed
        long end = compacted != null ? compacted[3] : System.nanoTime();
        long cpuEnd = compacted != null ? compacted[4] : ArrivalProbe.processCpuNanos();
        long jitEnd = compacted != null ? compacted[5] : ArrivalProbe.jitCpuNanos();
        // wall, CPU, JIT CPU (ns) when the table became query-ready; null if never
        long[] ready =
            compacted != null && compacted[0] != 0
                ? new long[] {compacted[0], compacted[1], compacted[2]}
                : null;
        if (compacts && !live) {
          guard.cancel();
        }
        long clientWallMs = (end - submitted) / 1_000_000;
        long first = ArrivalProbe.firstArrivalNanos();
        long readToEndMs = first == 0 ? clientWallMs : (end - first) / 1_000_000;
        long readToEndCpuMs = (cpuEnd - ArrivalProbe.firstArrivalCpuNanos()) / 1_000_000;
        long readToEndJitCpuMs = (jitEnd - ArrivalProbe.firstArrivalJitCpuNanos()) / 1_000_000;
        monitor.close();
        if (monitor.failure() != null) {
          throw new PhaseFailure(name + ": " + monitor.failure());
        }
        String storage = rest.checkpointStorage();
        if (!storage.contains("FileSystem")) {
          throw new PhaseFailure(
              name + ": the job used checkpoint storage " + storage + ", not a file system");
        }
        CheckpointSummary checkpoints =
            CheckpointSummary.of(
                rest.checkpoints().path("history"),
                ArrivalProbe.arrivedByCheckpoint(),
                monitor.stagedByCheckpoint(),
                monitor.stagedMetricSeen());

        if (table == null) {
          table = loadTable(config);
        }
        if (!compacts && !variant.equals("F")) {
          // no compaction: the table is query-ready when the job ends, or never
          QueryReady.Look look = QueryReady.look(table);
          if (look.ready(expectedRows, target)) {
            ready = new long[] {end, cpuEnd, jitEnd};
          }
        }
        TableStats.Stats s = TableStats.of(table);
        RunResult r =
            new RunResult(
                variant,
                phase,
                s.rows(),
                s.snapshots(),
                s.dataFiles(),
                s.fileBytes(),
                s.p10(),
                s.p50(),
                s.p90(),
                s.max(),
                s.maxRowAgeAtCommitMs(),
                s.closeReasons(),
                heap.peakSampledBytes(),
                heap.peakAfterGcBytes(),
                heap.maxHeapBytes(),
                jobRuntimeMs < 0 ? clientWallMs : jobRuntimeMs,
                clientWallMs,
                readToEndMs,
                readToEndCpuMs,
                readToEndJitCpuMs,
                drainMs,
                storage,
                checkpoints,
                ready != null,
                ready == null ? -1 : (ready[0] - (first == 0 ? submitted : first)) / 1_000_000,
                ready == null ? -1 : (ready[1] - ArrivalProbe.firstArrivalCpuNanos()) / 1_000_000,
                ready == null
                    ? -1
                    : (ready[2] - ArrivalProbe.firstArrivalJitCpuNanos()) / 1_000_000,
                s.partitions(),
                s.metadata());
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(resultFile.toFile(), r);
      }
    }
  }

  /** The variants whose job compacts its table in the job (never ends by itself). */
  static boolean compacts(String variant) {
    return variant.equals("BRC");
  }

  private static Table loadTable(JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    return catalog.loadTable(Catalogs.tableIdentifier(config));
  }

  /**
   * A compacting job: waits until every expected row is committed (bounded by the phase time-out, a
   * failure otherwise), then until the compaction has made the table query-ready (bounded by {@code
   * queryReadyTimeout}, or until {@link #STALLED_AFTER_REWRITES} rewrites gained nothing: not
   * getting there is a result, not a failure). Returns the wall, CPU and JIT CPU nanos at
   * query-ready (0s when never) and at the moment every row was committed; a warm-up returns {@code
   * null} as soon as the compaction has rewritten once.
   */
  private static long[] awaitCompacted(
      PhaseGuard guard,
      Table table,
      long expectedRows,
      long target,
      Duration phaseTimeout,
      Duration queryReadyTimeout,
      String name,
      boolean warmUp)
      throws Exception {
    if (!guard.poll(() -> QueryReady.look(table).rows() >= expectedRows, phaseTimeout, POLL_MS)) {
      throw new PhaseFailure(
          name + ": not every row was committed within " + phaseTimeout + " (phase-timeout)");
    }
    long committed = System.nanoTime();
    long committedCpu = ArrivalProbe.processCpuNanos();
    long committedJit = ArrivalProbe.jitCpuNanos();
    CompactionProgress progress = new CompactionProgress(table);
    boolean[] ready = {false};
    boolean done =
        guard.poll(
            () -> {
              ready[0] = progress.look().ready(expectedRows, target);
              return ready[0]
                  || progress.stalled(STALLED_AFTER_REWRITES)
                  || (warmUp && progress.rewrites() > 0);
            },
            queryReadyTimeout,
            POLL_MS);
    if (warmUp && done) {
      return null; // the compaction's code ran once: warm enough
    }
    if (!ready[0]) {
      System.err.println(
          "BENCH: "
              + name
              + " was not query-ready "
              + (done
                  ? "and its compaction stalled (" + progress + ")"
                  : "within " + queryReadyTimeout)
              + ": "
              + QueryReady.look(table));
      return new long[] {0, 0, 0, committed, committedCpu, committedJit};
    }
    return new long[] {
      System.nanoTime(),
      ArrivalProbe.processCpuNanos(),
      ArrivalProbe.jitCpuNanos(),
      committed,
      committedCpu,
      committedJit
    };
  }

  /**
   * Builds the run's job (source, {@link ArrivalProbe}, transform, the variant's sink) on {@code
   * cluster} and submits it.
   */
  private static JobClient submit(
      ChildCluster cluster, String variant, String phase, int parallelism, JobConfig config)
      throws Exception {
    boolean live = phase.equals("live");
    StreamExecutionEnvironment env = cluster.environment();
    env.setParallelism(parallelism);
    SpatialIngestJob.configureCheckpointing(env, config);
    if (!variant.equals("AC")) { // as the job does (SpatialIngestJob.build), for every sink alike
      SpatialIngestJob.reuseObjectsUnlessConfigured(env);
    }
    DataStream<SourceRecord> source =
        SpatialIngestJob.source(env, config, !live, SpatialIngestJob.decideStart(env, config));
    DataStream<SourceRecord> probed =
        source
            .map(new ArrivalProbe())
            .name("arrival-probe")
            .uid("arrival-probe")
            .setParallelism(source.getParallelism());
    DataStream<RowData> rows = SpatialIngestJob.transform(probed, config);
    switch (variant) {
      case "A", "A0", "A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9" ->
          SpatialIngestJob.sink(rows, config);
      case "AC" -> SpatialIngestJob.sink(rows, config);
      case "AN" -> SpatialIngestJob.sink(rows, config.with(Map.of("sink.distribution", "none")));
      case "B" -> icebergSink(rows, config, parallelism, Map.of());
      case "BR" -> icebergRangeSink(rows, config, parallelism);
      case "BRC" -> {
        icebergRangeSink(rows, config, parallelism);
        // a lock database per warehouse: a cancelled warm-up job may leave its lock held
        compaction(env, config, parallelism, "jdbc:sqlite:" + config.warehouse() + "-locks.db");
      }
      case "BT" ->
          icebergSink(
              rows,
              config,
              parallelism,
              Map.of(
                  TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                  Long.toString(config.targetFileBytes())));
      case "B1" ->
          icebergSink(rows, config, parallelism, Map.of("parquet.enable.dictionary", "false"));
      case "F" -> discardingSink(rows, config, parallelism);
      default ->
          throw new IllegalArgumentException(
              "variant must be A, AN, AC, A0-A9, B, BT, B1, BR, BRC or F: " + variant);
    }
    return env.executeAsync("bench-" + variant + "-" + phase);
  }

  /**
   * Runs the measured job's twin to its end first: the same backlog, its own table and consumer
   * group, so that the measured job runs on JIT-compiled code. Bounded and restart-checked like the
   * measured run; its counts and table are dropped.
   */
  private static void warmUp(
      ChildCluster cluster,
      String variant,
      int parallelism,
      Map<String, String> keys,
      String name,
      Duration phaseTimeout,
      long expectedRows,
      Duration queryReadyTimeout)
      throws Exception {
    Map<String, String> twin = new LinkedHashMap<>(keys);
    String suffix = "-" + name.replaceAll("\\W+", "-");
    Path warehouse = Path.of(keys.get("catalog.warehouse") + suffix);
    twin.put("catalog.warehouse", warehouse.toString());
    twin.put("kafka.group-id", keys.get("kafka.group-id") + suffix);
    JobConfig config = JobConfig.fromMap(twin);
    JobClient job = submit(cluster, variant, "throughput", parallelism, config);
    JobMonitor monitor =
        new JobMonitor(new JobRest(cluster.restAddress(), job.getJobID()), cluster.monitorPeriod());
    PhaseGuard guard = new PhaseGuard(name, job, monitor);
    if (compacts(variant)) {
      // the compaction's code is warmed up too: until query-ready (or its time-out), then cancel
      awaitCompacted(
          guard,
          loadTable(config),
          expectedRows,
          config.targetFileBytes(),
          phaseTimeout,
          queryReadyTimeout,
          name,
          true);
      guard.cancel();
    } else {
      guard.await(job.getJobExecutionResult(), phaseTimeout, "the end of the warm-up job");
    }
    monitor.close();
    if (monitor.failure() != null) {
      throw new PhaseFailure(name + ": " + monitor.failure());
    }
    ArrivalProbe.reset();
    SinkBenchmark.deleteRecursively(warehouse);
  }

  /**
   * Keeps {@code file} holding how many records the job has read, for the orchestrator's catch-up
   * wait.
   */
  private static void reportConsumed(Path file) {
    Thread t =
        new Thread(
            () -> {
              Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
              try {
                while (true) {
                  Files.writeString(tmp, Long.toString(ArrivalProbe.records()));
                  Files.move(
                      tmp,
                      file,
                      java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                      java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                  Thread.sleep(100);
                }
              } catch (IOException | InterruptedException e) {
                // the child is ending
              }
            },
            "consumed-reporter");
    t.setDaemon(true);
    t.start();
  }

  /** Completes on a line on stdin, or when stdin ends (the orchestrator is gone). */
  private static CompletableFuture<Void> stopRequest() {
    CompletableFuture<Void> requested = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                    .readLine();
              } catch (IOException e) {
                // stdin closed: stop as well
              }
              requested.complete(null);
            },
            "stop-request");
    reader.setDaemon(true);
    reader.start();
    return requested;
  }

  /**
   * Variant F, the floor: the same source and transform into a sink that discards every row (and an
   * empty table of the same definition, so the child reads its figures like the others').
   */
  static void discardingSink(DataStream<RowData> rows, JobConfig config, int parallelism) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    TableBootstrap.ensureTable(
        catalog,
        Catalogs.tableIdentifier(config),
        org.spatialingest.table.TelemetryTable.LAYOUT,
        config.partitioning());
    rows.sinkTo(new DiscardingSink<>()).name("discard").setParallelism(parallelism);
  }

  /**
   * Variant B: Iceberg's own Flink sink, same table definition, writer parallelism = ours; B1 the
   * same with extra table properties (which Iceberg's writers read).
   */
  static void icebergSink(
      DataStream<RowData> rows,
      JobConfig config,
      int parallelism,
      Map<String, String> tableProperties) {
    SinkWrittenTables.create(config, tableProperties);
    IcebergSink.forRowData(rows)
        .tableLoader(Catalogs.tableLoader(config))
        .writeParallelism(parallelism)
        .append();
  }

  /**
   * Variant BR: Iceberg's own Flink sink with its statistics-driven range shuffle ({@code
   * DistributionMode.RANGE}, statistics type AUTO) on the table's sort order (hilbert ASC, the
   * table {@link TableBootstrap#ensureTable} creates for every variant), rolling its files at T
   * ({@code write.target-file-size-bytes}, as a user wanting files near T sets it).
   */
  static void icebergRangeSink(DataStream<RowData> rows, JobConfig config, int parallelism) {
    SinkWrittenTables.create(
        config,
        Map.of(
            TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, Long.toString(config.targetFileBytes())));
    IcebergSink.forRowData(rows)
        .tableLoader(Catalogs.tableLoader(config))
        .writeParallelism(parallelism)
        .distributionMode(DistributionMode.RANGE)
        .append();
  }

  /**
   * Variant BRC's compaction: Iceberg's Flink {@link TableMaintenance} in the same job, as its docs
   * set it up for a streaming table (a monitor source on the table, one task at a time under a
   * {@link JdbcLockFactory} lock, here in a SQLite file of the child's own), running {@link
   * RewriteDataFiles} with target file size T every {@value #COMPACT_EVERY_COMMITS} commits and at
   * least every L; the rewrite runs at the job's parallelism. The docs' production figures (rate
   * limit 10 min, lock check 10 s) are scaled to the benchmark's seconds-long runs: rate limit and
   * lock check C.
   */
  static void compaction(
      StreamExecutionEnvironment env, JobConfig config, int parallelism, String lockJdbcUri)
      throws IOException {
    String lockId = Catalogs.tableIdentifier(config).toString();
    Map<String, String> init = new HashMap<>();
    init.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "true");
    // created once here: the lock's operators creating it at the same time race (as in
    // TableMaintenanceTasks)
    try (JdbcLockFactory lock = new JdbcLockFactory(lockJdbcUri, "init", init)) {
      lock.open();
    }
    Map<String, String> props = new HashMap<>();
    props.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "false");
    Duration c = config.checkpointInterval();
    TableMaintenance.forTable(
            env, Catalogs.tableLoader(config), new JdbcLockFactory(lockJdbcUri, lockId, props))
        .uidSuffix("bench-compaction")
        .rateLimit(c)
        .lockCheckDelay(c)
        .parallelism(parallelism)
        .add(
            RewriteDataFiles.builder()
                .partialProgressEnabled(true)
                .partialProgressMaxCommits(COMPACT_EVERY_COMMITS)
                .scheduleOnCommitCount(COMPACT_EVERY_COMMITS)
                .scheduleOnInterval(config.maxLatency())
                .targetFileSizeBytes(config.targetFileBytes()))
        .append();
  }
}
