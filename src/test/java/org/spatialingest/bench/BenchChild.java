package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.sink.IcebergSink;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.tools.SinkTables;

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
  private BenchChild() {}

  public static void main(String[] args) {
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
      JobConfig config = JobConfig.fromMap(keys);
      boolean live = phase.equals("live");
      String name = phase + " " + variant;

      try (ChildCluster cluster =
          ChildCluster.start(
              parallelism,
              resultFile.resolveSibling(
                  "checkpoints-" + resultFile.getFileName().toString().replace(".json", "")))) {
        for (int w = 1; !live && w <= warmups; w++) {
          warmUp(cluster, variant, parallelism, keys, name + " warm-up " + w, phaseTimeout);
          heap.reset();
        }
        long submitted = System.nanoTime();
        JobClient job = submit(cluster, variant, phase, parallelism, config);
        JobRest rest = new JobRest(cluster.restAddress(), job.getJobID());
        JobMonitor monitor = new JobMonitor(rest);
        PhaseGuard guard = new PhaseGuard(name, job, monitor);
        long drainMs = 0;
        JobExecutionResult result;
        if (live) {
          guard.awaitRunning(phaseTimeout);
          reportConsumed(ChildJvm.consumedFile(resultFile));
          Files.writeString(readyFile, "ready");
          guard.await(stopRequest(), stopWait, "the stop request from the orchestrator");
          long stop = System.nanoTime();
          Path savepoints = Files.createTempDirectory(resultFile.getParent(), "savepoint-");
          guard.await(
              job.stopWithSavepoint(
                  true, savepoints.toUri().toString(), SavepointFormatType.CANONICAL),
              phaseTimeout,
              "the draining stop-with-savepoint");
          result =
              guard.await(job.getJobExecutionResult(), phaseTimeout, "the end of the drained job");
          drainMs = (System.nanoTime() - stop) / 1_000_000;
        } else {
          result =
              guard.await(
                  job.getJobExecutionResult(),
                  phaseTimeout,
                  "the end of the bounded job (the whole backlog read and committed)");
        }
        long end = System.nanoTime();
        long cpuEnd = ArrivalProbe.processCpuNanos();
        long jitEnd = ArrivalProbe.jitCpuNanos();
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

        Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
        Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
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
                result.getNetRuntime(TimeUnit.MILLISECONDS),
                clientWallMs,
                readToEndMs,
                readToEndCpuMs,
                readToEndJitCpuMs,
                drainMs,
                storage,
                checkpoints);
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(resultFile.toFile(), r);
      }
    }
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
    DataStream<SourceRecord> source = SpatialIngestJob.source(env, config, !live);
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
      case "B1" ->
          icebergSink(rows, config, parallelism, Map.of("parquet.enable.dictionary", "false"));
      case "F" -> discardingSink(rows, config, parallelism);
      default ->
          throw new IllegalArgumentException(
              "variant must be A, AN, AC, A0-A9, B, B1 or F: " + variant);
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
      Duration phaseTimeout)
      throws Exception {
    Map<String, String> twin = new LinkedHashMap<>(keys);
    String suffix = "-" + name.replaceAll("\\W+", "-");
    Path warehouse = Path.of(keys.get("catalog.warehouse") + suffix);
    twin.put("catalog.warehouse", warehouse.toString());
    twin.put("kafka.group-id", keys.get("kafka.group-id") + suffix);
    JobClient job = submit(cluster, variant, "throughput", parallelism, JobConfig.fromMap(twin));
    JobMonitor monitor = new JobMonitor(new JobRest(cluster.restAddress(), job.getJobID()));
    new PhaseGuard(name, job, monitor)
        .await(job.getJobExecutionResult(), phaseTimeout, "the end of the warm-up job");
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
    SinkTables.create(config, tableProperties);
    IcebergSink.forRowData(rows)
        .tableLoader(Catalogs.tableLoader(config))
        .writeParallelism(parallelism)
        .append();
  }
}
