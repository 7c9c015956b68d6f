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
import java.util.stream.Stream;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.sizing.Units;

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
      if (rounds.live()) {
        runLive(settings, kafka, dir, produced, live, catchUpMs);
      }
      ThroughputReport tput = new ThroughputReport(settings, rounds);
      if (rounds.throughput()) {
        for (String workload : rounds.workloads()) {
          runRounds(workload, rounds, settings, kafka, dir, tput);
        }
        tput.write(dir);
        System.out.println();
        System.out.println(tput.markdown());
      }
      if (rounds.live()) {
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
      System.out.println("Written: " + dir + "/sink-benchmark.{md,json}, throughput.{md,json}");
    }
  }

  private static void runLive(
      BenchSettings settings,
      EmbeddedKafka kafka,
      Path dir,
      InputFeed.Produced[] produced,
      RunResult[] live,
      long[] catchUpMs)
      throws Exception {
    Duration timeout = settings.phaseTimeout();
    for (String topic : new String[] {"live-A", "live-B"}) {
      kafka.createTopic(topic, settings.partitions());
    }
    InputFeed feed = new InputFeed(kafka.bootstrapServers(), settings);
    feed.generateLive(System.currentTimeMillis());
    log(
        String.format(
            "Generated the live sequence: %,d records (%,d polygons), %.1f MB of JSON",
            settings.liveRecords(), feed.livePolygons(), feed.liveBytes() / 1e6));
    String[] variants = {"A", "B"};
    // the live child waits for its stop request at most for production, catch-up and a margin
    Duration stopWait = settings.duration().plus(timeout.multipliedBy(2));
    for (int i = 0; i < 2; i++) {
      String v = variants[i];
      try (ChildJvm child =
          ChildJvm.start(
              dir,
              v,
              "live",
              settings,
              jobKeys(settings, kafka, "live-" + v, dir),
              stopWait,
              false)) {
        child.awaitReady(timeout);
        log("live " + v + ": job running; producing for " + settings.duration().toSeconds() + " s");
        produced[i] = feed.replayLive("live-" + v);
        log(
            "live "
                + v
                + ": produced "
                + produced[i]
                + "; waiting until the job has consumed everything");
        catchUpMs[i] = awaitConsumed(produced[i].records(), child, timeout);
        log("live " + v + ": caught up " + catchUpMs[i] + " ms after production ended; draining");
        child.requestStop();
        live[i] = child.awaitResult(timeout.multipliedBy(2).plusMinutes(1));
        log("live " + v + ": " + live[i]);
      }
    }
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
      ThroughputReport report)
      throws Exception {
    BenchSettings settings = rounds.forWorkload(base, workload);
    Duration timeout = settings.phaseTimeout();
    String topic = "backlog-" + workload;
    kafka.createTopic(topic, settings.partitions());
    InputFeed.Produced backlog =
        new InputFeed(kafka.bootstrapServers(), settings).produceBacklog(topic);
    log("Backlog " + workload + " produced: " + backlog);
    List<String> variants = rounds.variants();
    for (int round = 1; round <= rounds.rounds(); round++) {
      List<String> order = new ArrayList<>(variants);
      Collections.rotate(order, -(round - 1));
      for (String v : order) {
        String name = "throughput-" + workload + "-r" + round + "-" + v;
        Map<String, String> keys = jobKeys(settings, kafka, topic, dir);
        keys.put("kafka.group-id", "bench-" + name);
        Path warehouse = dir.resolve("warehouse-" + name);
        keys.put("catalog.warehouse", warehouse.toString());
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
        deleteRecursively(warehouse);
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
