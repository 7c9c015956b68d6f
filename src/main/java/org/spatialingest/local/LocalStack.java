package org.spatialingest.local;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.KafkaClients;
import org.spatialingest.table.Catalogs;

/**
 * The embedded default stack for the {@code demo} command: a KRaft broker in this JVM, a generator
 * thread producing mixed telemetry at a fixed rate, the job on a local Flink cluster with the web
 * UI (checkpoints in a local directory, {@link LocalFlink}), and a local Hadoop-catalog warehouse.
 * While it runs, every restart and failed checkpoint is printed as Flink reports it ({@link
 * JobHealthMonitor}). Stopping (duration reached or Ctrl-C) stops the generator, waits (bounded)
 * until the job has read every produced record ({@link KafkaBacklog}), drains the job
 * (stop-with-savepoint with drain), and prints as its last line the {@link DemoResult} counted from
 * the tables and the broker. Ctrl-C is a stop request ({@link StopSignal}); a kill (SIGTERM) skips
 * the wait and drains at once. Another writer to the same tables during the demo would be counted
 * as this run's rows.
 */
public final class LocalStack {
  /** Exit codes of {@link #run}. */
  public static final int OK = 0;

  public static final int RESULT_FAILED = 1;
  public static final int CANNOT_START = 2;

  /**
   * The demo's topic is new in every run (its broker is too): the tables keep the positions of
   * earlier runs per topic and partition, and a start without state skips what they say is
   * committed, so a second demo into the same warehouse under one topic name would skip its first
   * records as already read.
   */
  private static final String TOPIC_PREFIX = "telemetry-";

  private static final long PROGRESS_EVERY_MS = 5_000;

  /** When the generated points start sending a new property (the demo of schema evolution). */
  private static final int BATTERY_AFTER_SECONDS = 20;

  private LocalStack() {}

  /**
   * What the demo runs; {@code config} and {@code overrides} are flat job-configuration keys,
   * {@code flinkOptions} validated Flink options, {@code prometheusPort} where Flink's Prometheus
   * reporter serves the metrics (0: no reporter), {@code catchUp} the longest wait for the job to
   * read everything before the drain, {@code logFile} this run's log file (null: not known).
   */
  public record Options(
      Duration duration,
      int rate,
      int vehicles,
      int polygonEvery,
      int polygonVertices,
      Path warehouse,
      int uiPort,
      int prometheusPort,
      int parallelism,
      Map<String, String> config,
      Map<String, String> overrides,
      Map<String, String> flinkOptions,
      Duration catchUp,
      Path logFile) {}

  /**
   * Runs the demo; returns {@link #OK}, {@link #RESULT_FAILED} (the last line says why) or {@link
   * #CANNOT_START}.
   */
  public static int run(Options o, PrintStream out) throws Exception {
    if (!portFree(o.uiPort())) {
      out.println(
          "error: port "
              + o.uiPort()
              + " (Flink web UI) is already in use; stop what holds it or pass "
              + "--ui-port <free port>");
      return CANNOT_START;
    }
    if (o.prometheusPort() > 0 && !portFree(o.prometheusPort())) {
      out.println(
          "error: port "
              + o.prometheusPort()
              + " (Prometheus metrics) is already in use; pass --prometheus-port <free port>");
      return CANNOT_START;
    }
    Path kafkaDir = Files.createTempDirectory("spatial-ingest-kafka");
    out.println("Starting Kafka (KRaft) ...");
    String topic = TOPIC_PREFIX + System.currentTimeMillis();
    // the demo's own clients (generator, catch-up) connect as the job does: kafka.properties too
    try (EmbeddedKafka kafka = EmbeddedKafka.start(kafkaDir);
        Admin admin =
            Admin.create(KafkaClients.properties(jobConfig(o, kafka.bootstrapServers(), topic)))) {
      kafka.createTopic(topic, 3);
      JobConfig config = jobConfig(o, kafka.bootstrapServers(), topic);
      Configuration flinkConf =
          LocalFlink.configuration("demo", webUi(o.uiPort(), o.prometheusPort()), o.flinkOptions());
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(flinkConf);
      env.setParallelism(o.parallelism());
      SpatialIngestJob.build(env, config, false);

      Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
      Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
      Table rejects = catalog.loadTable(Catalogs.rejectsTableIdentifier(config));
      long rowsBefore = TableRows.total(table);
      long rejectsBefore = TableRows.total(rejects);
      long startedMs = System.currentTimeMillis();

      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong produced = new AtomicLong();
      Thread generator = new Thread(() -> generate(config, o, stop, produced, out), "generator");
      generator.setDaemon(true);
      JobClient job = env.executeAsync("spatial-ingest demo");
      generator.start();
      int restPort = flinkConf.get(RestOptions.PORT);
      out.println("Kafka broker:  " + kafka.bootstrapServers() + " (topic " + topic + ")");
      out.println("Flink web UI:  http://localhost:" + restPort + "  (job " + job.getJobID() + ")");
      out.println(
          "Iceberg table: "
              + config.namespace()
              + "."
              + config.table()
              + " (rejects: "
              + Catalogs.rejectsTableIdentifier(config)
              + ") in "
              + catalog.name()
              + " at "
              + config.warehouse());
      if (o.prometheusPort() > 0) {
        out.println(
            "Prometheus:    http://localhost:"
                + o.prometheusPort()
                + "/metrics  (the series the Grafana dashboard k8s/grafana uses)");
      }
      out.println("Checkpoints:   " + LocalFlink.describeCheckpoints(flinkConf));
      out.println(
          "Logs:          " + (o.logFile() == null ? "as configured for log4j" : o.logFile()));
      out.println(
          "Generating "
              + o.rate()
              + " records/s; one in "
              + o.polygonEvery()
              + " is a "
              + o.polygonVertices()
              + "-vertex polygon. "
              + (o.duration().isZero()
                  ? "Ctrl-C stops."
                  : "Stops after " + o.duration().toSeconds() + " s.")
              + " After "
              + BATTERY_AFTER_SECONDS
              + " s the points gain a property battery_pct (a column under"
              + " --set input.typed-properties=auto).");

      CountDownLatch finished = new CountDownLatch(1);
      AtomicBoolean exiting = new AtomicBoolean();
      Thread hook =
          new Thread(
              () -> { // kill (SIGTERM): the JVM exits anyway; drain at once, best effort
                exiting.set(true);
                stop.set(true);
                try {
                  finished.await(
                      (o.catchUp() == null ? 600 : o.catchUp().toSeconds()) + 180,
                      TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                  Thread.currentThread().interrupt();
                }
              },
              "demo-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);

      Progress progress =
          new Progress(out, produced, table, rejects, rowsBefore, rejectsBefore, startedMs);
      long deadline =
          o.duration().isZero()
              ? Long.MAX_VALUE
              : System.currentTimeMillis() + o.duration().toMillis();
      try (StopSignal ctrlC = StopSignal.install(stop, out)) {
        JobHealth health;
        CatchUp caughtUp;
        String drainFailure;
        try (JobHealthMonitor monitor = JobHealthMonitor.start(restPort, job.getJobID(), out, "")) {
          while (!stop.get()
              && System.currentTimeMillis() < deadline
              && !job.getJobStatus().get().isTerminalState()) {
            sleepUpTo(PROGRESS_EVERY_MS, stop, deadline);
            progress.print();
          }
          stop.set(true);
          generator.join(10_000);
          Duration limit =
              o.catchUp() != null
                  ? o.catchUp()
                  : config
                      .maxLatency()
                      .plus(config.checkpointInterval().multipliedBy(2))
                      .plusSeconds(60);
          Duration wait = exiting.get() ? Duration.ZERO : limit;
          out.printf(
              "Stopping: %,d records produced; waiting (at most %d s) until the tables hold them all ...%n",
              produced.get(), wait.toSeconds());
          caughtUp = catchUp(admin, topic, config.groupId(), wait, job, out);
          out.println("Draining the job (stop-with-savepoint, drain) ...");
          monitor.stopping(); // the drain declines periodic checkpoints on purpose
          drainFailure = drain(job, monitor);
          health = monitor.health();
        }
        if (drainFailure == null) { // drained: the run ended normally
          LocalFlink.removeRunFolder(flinkConf);
        }

        progress.print();
        DemoResult result =
            new DemoResult(
                KafkaBacklog.read(admin, topic, config.groupId()).records(),
                TableRows.total(table) - rowsBefore,
                TableRows.total(rejects) - rejectsBefore,
                config.namespace() + "." + config.table(),
                Catalogs.rejectsTableIdentifier(config).toString(),
                health,
                caughtUp.unread(),
                caughtUp.waited(),
                drainFailure);
        out.println(
            "Read the table with any Iceberg engine at "
                + config.warehouse()
                + (result.ok()
                    ? ""
                    : "; what went wrong is in the log"
                        + (o.logFile() == null ? "" : " " + o.logFile())));
        out.println(result.line());
        return result.ok() ? OK : RESULT_FAILED;
      } finally {
        finished.countDown();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // already running
        }
      }
    }
  }

  private static JobConfig jobConfig(Options o, String bootstrapServers, String topic) {
    Map<String, String> keys = new HashMap<>(o.config());
    keys.putIfAbsent("catalog.type", "hadoop");
    keys.putIfAbsent("catalog.warehouse", o.warehouse().toString());
    keys.putIfAbsent("checkpoint.interval", "5s");
    keys.putIfAbsent("sink.max-latency", "20s");
    keys.putAll(o.overrides());
    keys.put("kafka.bootstrap-servers", bootstrapServers);
    keys.put("kafka.topic", topic);
    return JobConfig.fromMap(keys);
  }

  private static Configuration webUi(int port, int prometheusPort) {
    Configuration c = new Configuration();
    c.set(RestOptions.PORT, port);
    c.set(RestOptions.BIND_ADDRESS, "localhost");
    return prometheusPort > 0 ? LocalFlink.withPrometheus(c, prometheusPort) : c;
  }

  /** Records the job had not read when the wait ended, and how long the wait was. */
  private record CatchUp(long unread, Duration waited) {}

  /**
   * Waits until the job's consumer group covers every record in the topic — the sink sets the
   * group's offsets to the table's positions, so that is when every record is committed — at most
   * {@code limit} (and no longer than the job runs); prints progress every 5 s.
   */
  private static CatchUp catchUp(
      Admin admin, String topic, String groupId, Duration limit, JobClient job, PrintStream out)
      throws Exception {
    long start = System.currentTimeMillis();
    long lastPrinted = start;
    while (true) {
      KafkaBacklog.Offsets offsets = KafkaBacklog.read(admin, topic, groupId);
      long waited = System.currentTimeMillis() - start;
      if (offsets.unread() == 0) {
        out.printf(
            "Caught up after %d s: the tables hold all %,d records.%n",
            waited / 1000, offsets.records());
        return new CatchUp(0, Duration.ofMillis(waited));
      }
      if (waited >= limit.toMillis() || job.getJobStatus().get().isTerminalState()) {
        out.printf(
            "Not caught up after %d s: %,d of %,d records not yet committed.%n",
            waited / 1000, offsets.unread(), offsets.records());
        return new CatchUp(offsets.unread(), Duration.ofMillis(waited));
      }
      if (System.currentTimeMillis() - lastPrinted >= PROGRESS_EVERY_MS) {
        out.printf(
            "catching up: %,d of %,d records not yet committed (waited %d s of at most %d s)%n",
            offsets.unread(), offsets.records(), waited / 1000, limit.toSeconds());
        lastPrinted = System.currentTimeMillis();
      }
      Thread.sleep(500);
    }
  }

  /**
   * Stop-with-savepoint with drain into the configured savepoint directory; returns why it failed,
   * or null. A job that could not be drained is polled once more (it may be restarting) and
   * cancelled.
   */
  private static String drain(JobClient job, JobHealthMonitor monitor) {
    try {
      job.stopWithSavepoint(true, null, SavepointFormatType.CANONICAL).get(120, TimeUnit.SECONDS);
      job.getJobExecutionResult().get(120, TimeUnit.SECONDS);
      return null;
    } catch (Exception e) {
      Throwable root = e;
      while (root.getCause() != null) {
        root = root.getCause();
      }
      monitor.poll();
      try {
        job.cancel().get(60, TimeUnit.SECONDS);
      } catch (Exception alreadyGone) {
        // nothing left to stop
      }
      return root.toString();
    }
  }

  private static void generate(
      JobConfig config, Options o, AtomicBoolean stop, AtomicLong produced, PrintStream out) {
    String topic = config.topic();
    Properties p = KafkaClients.properties(config); // the user's kafka.properties win
    p.putIfAbsent(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "20");
    p.putIfAbsent(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(8 << 20));
    TelemetryGenerator gen =
        new TelemetryGenerator(
                System.nanoTime(), o.vehicles(), o.polygonEvery(), o.polygonVertices())
            .batteryFrom((long) (o.rate() * BATTERY_AFTER_SECONDS));
    long start = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      while (!stop.get()) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * o.rate());
        while (produced.get() < due && !stop.get()) {
          TelemetryGenerator.Record r = gen.next(System.currentTimeMillis());
          producer.send(new ProducerRecord<>(topic, r.id().getBytes(), r.json()));
          produced.incrementAndGet();
        }
        Thread.sleep(5);
      }
      producer.flush();
    } catch (Exception e) {
      out.println("generator stopped: " + e);
    }
  }

  /**
   * The progress line: this run's committed rows and rejects, its snapshots, the table's files, the
   * last commit.
   */
  private record Progress(
      PrintStream out,
      AtomicLong produced,
      Table table,
      Table rejects,
      long rowsBefore,
      long rejectsBefore,
      long startedMs) {
    void print() {
      long rows = TableRows.total(table) - rowsBefore;
      long rejected = TableRows.total(rejects) - rejectsBefore;
      Snapshot current = table.currentSnapshot();
      int snapshots = 0;
      for (Snapshot s : table.snapshots()) {
        snapshots += s.timestampMillis() >= startedMs ? 1 : 0;
      }
      String files =
          current == null ? "0" : current.summary().getOrDefault("total-data-files", "0");
      String age =
          current == null || current.timestampMillis() < startedMs
              ? "-"
              : ((System.currentTimeMillis() - current.timestampMillis()) / 1000) + " s";
      out.printf(
          "produced %,d | committed %,d rows + %,d rejects | snapshots %d | data files %s | last commit %s "
              + "ago%n",
          produced.get(), rows, rejected, snapshots, files, age);
    }
  }

  private static void sleepUpTo(long millis, AtomicBoolean stop, long deadline)
      throws InterruptedException {
    long until = Math.min(deadline, System.currentTimeMillis() + millis);
    while (!stop.get() && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
  }

  /**
   * Whether a server could listen on the port now. With SO_REUSEADDR, as the REST server binds:
   * connections of an earlier run still in TIME_WAIT do not hold the port.
   */
  private static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("localhost", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
