package org.spatialingest.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.sizing.Units;
import org.spatialingest.table.Catalogs;

/**
 * Compares our bounded sink (A) with Iceberg's IcebergSink (B) on the same input, parallelism and
 * checkpoint interval, one after the other, each in its own JVM, MiniCluster (file-system
 * checkpoint storage) and warehouse:
 *
 * <ol>
 *   <li>live phase: the same pre-generated sequence is produced at the offered rate to a real
 *       embedded KRaft broker while the job runs; once the job has consumed all of it, it is
 *       drained (stop with savepoint), and files, snapshots, file sizes, freshness, peak heap and
 *       checkpoint costs are read;
 *   <li>throughput phase, per workload ({@code points}: no polygons; {@code mix}: the polygon
 *       knobs): a backlog of N records is produced once; then in each of {@code rounds} interleaved
 *       rounds every variant (A ours, B IcebergSink, F a discarding sink = the floor, optionally A0
 *       = ours from another build) reads all of it with a bounded job, the order rotated per round;
 *       records/s = N / (first record read to the job's end), and the report ({@link
 *       ThroughputReport}) gives each ratio as median (min–max) over the rounds.
 * </ol>
 *
 * Phases, rounds, workloads and variants are {@link RoundSettings}.
 *
 * <p>A run either completes or fails loudly (exit 1, "BENCHMARK FAILED: ..." and no report): a
 * restart of a measured job ({@link JobMonitor}), a wait longer than {@code phase-timeout} ({@link
 * PhaseGuard}, {@link ChildJvm}) or any other failure of a child. The report goes to stdout and
 * {@code target/bench/sink-benchmark.{md,json}}. Run with {@code mvn -B -Pbench verify}; knobs are
 * {@code name=value} arguments ({@code -Dbench.args="rate=5000 duration=90s"} through Maven), see
 * {@link BenchSettings}; the argument {@code jfr} records the throughput runs with Java Flight
 * Recorder.
 */
public final class SinkBenchmark {
  private SinkBenchmark() {}

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      System.out.println();
      System.out.println(
          "[bench] BENCHMARK FAILED: " + (t.getMessage() == null ? t.toString() : t.getMessage()));
      System.out.println(
          "[bench] No report was written: a run with a restart, a time-out or a failure has no valid "
              + "figures.");
      t.printStackTrace(System.out);
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run(String[] args) throws Exception {
    RoundSettings rounds = RoundSettings.parse(args);
    BenchSettings settings = BenchSettings.parse(rounds.rest());
    Path dir = Path.of("target", "bench").toAbsolutePath();
    deleteRecursively(dir);
    Files.createDirectories(dir);
    Duration timeout = settings.phaseTimeout();
    log("Scenario: " + settings.describe());
    log("Throughput rounds: " + rounds.describe());
    log(
        "Output: "
            + dir
            + " (child logs: <phase>-<variant>.log); every wait is bounded by phase-timeout = "
            + Units.formatDuration(timeout));

    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      InputFeed.Produced[] produced = new InputFeed.Produced[2];
      RunResult[] live = new RunResult[2];
      long[] catchUpMs = new long[2];
      QueryReadyReport queryReady = new QueryReadyReport();
      if (rounds.live()) {
        runLive(
            rounds.forWorkload(settings, rounds.liveWorkload()),
            rounds,
            kafka,
            dir,
            produced,
            live,
            catchUpMs,
            queryReady);
      }
      ThroughputReport tput = new ThroughputReport(settings, rounds);
      if (rounds.throughput()) {
        for (String workload : rounds.workloads()) {
          runRounds(workload, rounds, settings, kafka, dir, tput, queryReady);
        }
        tput.write(dir);
        System.out.println();
        System.out.println(tput.markdown());
      }
      if (rounds.liveReport()) {
        // the side-by-side report shows the throughput round of the mix with the median A/B
        RunResult[] median = tput.medianRound("mix");
        BenchReport report =
            new BenchReport(
                settings,
                settings.liveRecords(),
                produced[0],
                produced[1],
                catchUpMs,
                live[0],
                live[1],
                median[0],
                median[1]);
        report.write(dir);
        System.out.println();
        System.out.println(report.markdown());
      }
      String md = queryReady.markdown(settings, rounds, tput);
      queryReady.writeMarkdown(dir, md);
      Goal.write(queryReady.goals(tput), dir.resolve("goals.json"));
      System.out.println();
      System.out.println(md);
      System.out.println(
          "Written: "
              + dir
              + "/query-ready.{json,md}, goals.json, queries.json, throughput.{md,json}"
              + (rounds.liveReport() ? ", sink-benchmark.{md,json}" : ""));
    }
  }

  /**
   * The live phase: each of the live variants in turn reads the same paced sequence; the query set
   * runs against its table in the middle of the production (while the table is live) and after the
   * phase. A and B also fill the side-by-side report's slots (0 and 1).
   */
  private static void runLive(
      BenchSettings settings,
      RoundSettings rounds,
      EmbeddedKafka kafka,
      Path dir,
      InputFeed.Produced[] produced,
      RunResult[] live,
      long[] catchUpMs,
      QueryReadyReport queryReady)
      throws Exception {
    Duration timeout = settings.phaseTimeout();
    InputFeed feed = new InputFeed(kafka.bootstrapServers(), settings);
    feed.generateLive(System.currentTimeMillis());
    QuerySet queries = feed.queries();
    log(
        String.format(
            "Generated the live sequence (%s): %,d records (%,d polygons), %.1f MB of JSON",
            rounds.liveWorkload(),
            settings.liveRecords(),
            feed.livePolygons(),
            feed.liveBytes() / 1e6));
    // the live child waits for its stop request at most for production, catch-up and a margin
    Duration stopWait = settings.duration().plus(timeout.multipliedBy(2));
    for (int round = 1; round <= rounds.liveRounds(); round++) {
      List<String> order = new ArrayList<>(rounds.liveVariants());
      Collections.rotate(order, -(round - 1));
      for (String v : order) {
        runLiveOnce(
            v,
            round,
            settings,
            rounds,
            kafka,
            dir,
            feed,
            queries,
            stopWait,
            produced,
            live,
            catchUpMs,
            queryReady);
      }
    }
  }

  /** One live run of variant {@code v}; round 1 of A and B fills the side-by-side report. */
  private static void runLiveOnce(
      String v,
      int round,
      BenchSettings settings,
      RoundSettings rounds,
      EmbeddedKafka kafka,
      Path dir,
      InputFeed feed,
      QuerySet queries,
      Duration stopWait,
      InputFeed.Produced[] produced,
      RunResult[] live,
      long[] catchUpMs,
      QueryReadyReport queryReady)
      throws Exception {
    Duration timeout = settings.phaseTimeout();
    String topic = "live-" + v + "-r" + round;
    String name = "live r" + round + " " + v;
    kafka.createTopic(topic, settings.partitions());
    Map<String, String> keys = jobKeys(settings, kafka, topic, dir);
    keys.putAll(harnessKeys(settings.liveRecords(), rounds));
    int slot = round > 1 ? -1 : v.equals("A") ? 0 : v.equals("B") ? 1 : -1;
    try (ChildJvm child =
        ChildJvm.start(
            dir, "live-r" + round + "-" + v, v, "live", settings, keys, stopWait, false, null, 0)) {
      child.awaitReady(timeout);
      log(name + ": job running; producing for " + settings.duration().toSeconds() + " s");
      // the table as it is in the middle of the phase, when the job has read half the input (it
      // may lag behind the production): its snapshot is taken then, the queries run on it after
      // the phase, so that reading costs the measured job no core
      CompletableFuture<Long> mid = new CompletableFuture<>();
      long half = settings.liveRecords() / 2;
      Thread midQueries =
          new Thread(
              () -> {
                try {
                  while (child.consumed() < half) {
                    Thread.sleep(50);
                  }
                  mid.complete(ReaderCost.currentSnapshot(table(keys)));
                } catch (Throwable t) {
                  mid.completeExceptionally(t);
                }
              },
              "mid-phase-snapshot");
      midQueries.setDaemon(true);
      midQueries.start();
      InputFeed.Produced p = feed.replayLive(topic);
      log(name + ": produced " + p + "; waiting until the job has consumed everything");
      long catchUp = awaitConsumed(p.records(), child, timeout);
      log(name + ": caught up " + catchUp + " ms after production ended; draining");
      Long midSnapshot = mid.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      child.requestStop();
      RunResult r = child.awaitResult(timeout.multipliedBy(2).plusMinutes(1));
      log(name + ": " + r);
      if (r.rowsCommitted() != p.records()) {
        throw new IllegalStateException(
            name + " committed " + r.rowsCommitted() + " rows of " + p.records());
      }
      Table table = table(keys);
      // mid-phase: files, row groups and bytes; its rows are not read (they differ from the other
      // pipelines' by commit lag anyway, and reading is most of the set's cost)
      ReaderCost.Result midResult = ReaderCost.run(table, queries, midSnapshot, false);
      // rows are read and compared in the first round only, as in the throughput phase
      ReaderCost.Result end =
          ReaderCost.run(table, queries, ReaderCost.currentSnapshot(table), round == 1);
      queryReady.add(
          QueryReadyReport.Row.of(
              "live", rounds.liveWorkload(), round, p.records(), r, midResult, end),
          midResult,
          end,
          dir);
      if (slot >= 0) {
        produced[slot] = p;
        catchUpMs[slot] = catchUp;
        live[slot] = r;
      }
    }
  }

  /** The keys only the harness reads ({@link BenchChild} takes them out of the job's). */
  static Map<String, String> harnessKeys(long expectedRows, RoundSettings rounds) {
    return Map.of(
        BenchChild.EXPECTED_ROWS_KEY,
        Long.toString(expectedRows),
        BenchChild.QUERY_READY_TIMEOUT_KEY,
        Long.toString(rounds.queryReadyTimeout().toMillis()));
  }

  /** The run's table, read with Iceberg's own catalog (the same warehouse the child wrote). */
  static Table table(Map<String, String> keys) {
    Map<String, String> job = new LinkedHashMap<>(keys);
    job.remove(BenchChild.EXPECTED_ROWS_KEY);
    job.remove(BenchChild.QUERY_READY_TIMEOUT_KEY);
    job.remove(BenchChild.WARMUP_TOPIC_KEY);
    job.remove(BenchChild.WARMUP_ROWS_KEY);
    JobConfig config = JobConfig.fromMap(job);
    return Catalogs.catalogLoader(config).loadCatalog().loadTable(Catalogs.tableIdentifier(config));
  }

  /**
   * One workload's throughput rounds: its backlog is produced once, then every round runs each
   * variant once on it (bounded job, own JVM, own consumer group and warehouse), the order rotated
   * by one per round so that each variant runs first, second and third equally often.
   */
  private static void runRounds(
      String workload,
      RoundSettings rounds,
      BenchSettings base,
      EmbeddedKafka kafka,
      Path dir,
      ThroughputReport report,
      QueryReadyReport queryReady)
      throws Exception {
    BenchSettings settings = rounds.forWorkload(base, workload);
    Duration timeout = settings.phaseTimeout();
    String topic = "backlog-" + workload;
    kafka.createTopic(topic, settings.partitions());
    InputFeed feed = new InputFeed(kafka.bootstrapServers(), settings);
    // a warm-up topic of the backlog's first records, produced first: the query set follows the
    // last topic produced
    int warmupRows = (int) Math.ceil(settings.backlog() * rounds.warmupShareFor(workload));
    String warmupTopic = warmupRows < settings.backlog() ? topic + "-warmup" : null;
    if (warmupTopic != null && rounds.warmups() > 0) {
      kafka.createTopic(warmupTopic, settings.partitions());
      log(
          "Warm-up backlog "
              + workload
              + " produced: "
              + feed.produceBacklog(warmupTopic, warmupRows));
    }
    InputFeed.Produced backlog = feed.produceBacklog(topic);
    log("Backlog " + workload + " produced: " + backlog);
    QuerySet queries = feed.queries();
    List<String> variants = rounds.variantsFor(workload);
    for (int round = 1; round <= rounds.rounds(); round++) {
      List<String> order = new ArrayList<>(variants);
      Collections.rotate(order, -(round - 1));
      for (String v : order) {
        String name = "throughput-" + workload + "-r" + round + "-" + v;
        Map<String, String> keys = jobKeys(settings, kafka, topic, dir);
        keys.put("kafka.group-id", "bench-" + name);
        Path warehouse = dir.resolve("warehouse-" + name);
        keys.put("catalog.warehouse", warehouse.toString());
        keys.putAll(harnessKeys(settings.backlog(), rounds));
        if (warmupTopic != null) {
          keys.put(BenchChild.WARMUP_TOPIC_KEY, warmupTopic);
          keys.put(BenchChild.WARMUP_ROWS_KEY, Integer.toString(warmupRows));
        }
        RunResult r;
        try (ChildJvm child =
            ChildJvm.start(
                dir,
                name,
                v,
                "throughput",
                settings,
                keys,
                Duration.ZERO,
                rounds.jfr(),
                rounds.classes(v),
                rounds.warmups())) {
          r = child.awaitResult(timeout.multipliedBy(2).plusMinutes(1));
        }
        if (!v.equals("F") && r.rowsCommitted() != settings.backlog()) {
          throw new IllegalStateException(
              name + " committed " + r.rowsCommitted() + " rows of " + settings.backlog());
        }
        report.add(workload, settings.backlog(), round, v, r);
        log(
            String.format(
                Locale.ROOT,
                "%s: %,.0f rec/s (first record to end %,d ms, CPU %,d ms, job runtime %,d ms)",
                name,
                report.recordsPerSecond(workload, r),
                r.readToEndMs(),
                r.readToEndCpuMs(),
                r.jobRuntimeMs()));
        // rows are read (and compared across pipelines) in the first round only: reading them is
        // most of a query's cost, and the later rounds' tables hold the same rows
        Table table = v.equals("F") || !rounds.queries() ? null : table(keys);
        ReaderCost.Result end =
            table == null
                ? null
                : ReaderCost.run(table, queries, ReaderCost.currentSnapshot(table), round == 1);
        queryReady.add(
            QueryReadyReport.Row.of(
                "throughput", workload, round, settings.backlog(), r, null, end),
            null,
            end,
            dir);
        deleteRecursively(warehouse);
        Files.deleteIfExists(Path.of(warehouse + "-locks.db"));
        deleteRecursively(dir.resolve("checkpoints-" + name));
      }
    }
  }

  /**
   * Waits until the job has read every produced record (counted by the {@link ArrivalProbe} after
   * the source, the same for both sinks: the group's offsets cannot be used, since ours are the
   * table's positions and lag by up to L by design); returns how long that took after production
   * ended. Fails at once if the child has failed, and after {@code timeout}.
   */
  static long awaitConsumed(long records, ChildJvm child, Duration timeout) throws Exception {
    long start = System.currentTimeMillis();
    long consumed = 0;
    while (System.currentTimeMillis() - start < timeout.toMillis()) {
      child.ensureAlive();
      consumed = child.consumed();
      if (consumed >= records) {
        return System.currentTimeMillis() - start;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the job read "
            + consumed
            + " of "
            + records
            + " records within "
            + timeout
            + " (phase-timeout) after production ended: it does not keep up or is stuck");
  }

  static Map<String, String> jobKeys(
      BenchSettings settings, EmbeddedKafka kafka, String topic, Path dir) {
    Map<String, String> keys = new LinkedHashMap<>(settings.jobKeys());
    keys.put("kafka.bootstrap-servers", kafka.bootstrapServers());
    keys.put("kafka.topic", topic);
    keys.put("kafka.group-id", "bench-" + topic);
    keys.put("kafka.starting-offsets", "earliest");
    keys.put("catalog.type", "hadoop");
    keys.put("catalog.warehouse", dir.resolve("warehouse-" + topic).toString());
    return keys;
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }

  /** A {@code main}'s {@code key=value} arguments (others are ignored). */
  static Map<String, String> keyValues(String[] args) {
    Map<String, String> a = new java.util.HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq > 0) {
        a.put(arg.substring(0, eq), arg.substring(eq + 1));
      }
    }
    return a;
  }

  static void deleteRecursively(Path dir) throws Exception {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
