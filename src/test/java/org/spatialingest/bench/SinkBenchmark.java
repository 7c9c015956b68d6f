package org.spatialingest.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
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
 *   <li>throughput phase: a backlog of N records (the same topic for both) is read by a bounded
 *       job; records/s = N / job runtime.
 * </ol>
 *
 * A run either completes or fails loudly (exit 1, "BENCHMARK FAILED: ..." and no report): a restart
 * of a measured job ({@link JobMonitor}), a wait longer than {@code phase-timeout} ({@link
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
    boolean jfr = Stream.of(args).anyMatch(SinkBenchmark::isJfr);
    BenchSettings settings =
        BenchSettings.parse(Stream.of(args).filter(a -> !isJfr(a)).toArray(String[]::new));
    Path dir = Path.of("target", "bench").toAbsolutePath();
    deleteRecursively(dir);
    Files.createDirectories(dir);
    Duration timeout = settings.phaseTimeout();
    log("Scenario: " + settings.describe());
    log(
        "Output: "
            + dir
            + " (child logs: <phase>-<variant>.log); every wait is bounded by phase-timeout = "
            + Units.formatDuration(timeout));

    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      for (String topic : new String[] {"live-A", "live-B", "backlog"}) {
        kafka.createTopic(topic, settings.partitions());
      }
      InputFeed feed = new InputFeed(kafka.bootstrapServers(), settings);
      feed.generateLive(System.currentTimeMillis());
      log(
          String.format(
              "Generated the live sequence: %,d records (%,d polygons), %.1f MB of JSON",
              settings.liveRecords(), feed.livePolygons(), feed.liveBytes() / 1e6));

      InputFeed.Produced[] produced = new InputFeed.Produced[2];
      RunResult[] live = new RunResult[2];
      long[] catchUpMs = new long[2];
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
          log(
              "live "
                  + v
                  + ": job running; producing for "
                  + settings.duration().toSeconds()
                  + " s");
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

      InputFeed.Produced backlog = feed.produceBacklog("backlog");
      log("Backlog produced: " + backlog);
      RunResult[] tput = new RunResult[2];
      for (int i = 0; i < 2; i++) {
        String v = variants[i];
        Map<String, String> keys = jobKeys(settings, kafka, "backlog", dir);
        keys.put("kafka.group-id", "bench-throughput-" + v);
        keys.put("catalog.warehouse", dir.resolve("warehouse-throughput-" + v).toString());
        try (ChildJvm child =
            ChildJvm.start(dir, v, "throughput", settings, keys, Duration.ZERO, jfr)) {
          tput[i] = child.awaitResult(timeout.multipliedBy(2).plusMinutes(1));
        }
        log("throughput " + v + ": " + tput[i]);
      }

      BenchReport report =
          new BenchReport(
              settings,
              settings.liveRecords(),
              produced[0],
              produced[1],
              catchUpMs,
              live[0],
              live[1],
              tput[0],
              tput[1]);
      report.write(dir);
      System.out.println();
      System.out.println(report.markdown());
      System.out.println(
          "Written: "
              + dir.resolve("sink-benchmark.md")
              + " and "
              + dir.resolve("sink-benchmark.json"));
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

  private static boolean isJfr(String arg) {
    return arg.equals("jfr") || arg.equals("--jfr");
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
