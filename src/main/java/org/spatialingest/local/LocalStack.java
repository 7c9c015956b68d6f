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
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;

/**
 * The embedded default stack for the {@code demo} command: a KRaft broker in this JVM, a generator thread producing
 * mixed telemetry at a fixed rate, the job on a local Flink cluster with the web UI, and a local Hadoop-catalog
 * warehouse. Stopping (duration reached or Ctrl-C) drains the job, so every produced record is committed.
 */
public final class LocalStack {
  private static final String TOPIC = "telemetry";

  private LocalStack() {}

  /** What the demo runs; {@code config} and {@code overrides} are flat job-configuration keys. */
  public record Options(Duration duration, int rate, int vehicles, int polygonEvery, int polygonVertices,
      Path warehouse, int uiPort, int parallelism, Map<String, String> config, Map<String, String> overrides) {}

  public static int run(Options o, PrintStream out) throws Exception {
    if (!portFree(o.uiPort())) {
      out.println("error: port " + o.uiPort() + " (Flink web UI) is already in use; stop what holds it or pass "
          + "--ui-port <free port>");
      return 2;
    }
    Path kafkaDir = Files.createTempDirectory("spatial-ingest-kafka");
    out.println("Starting Kafka (KRaft) ...");
    try (EmbeddedKafka kafka = EmbeddedKafka.start(kafkaDir)) {
      kafka.createTopic(TOPIC, 3);
      Map<String, String> keys = new HashMap<>(o.config());
      keys.putIfAbsent("catalog.type", "hadoop");
      keys.putIfAbsent("catalog.warehouse", o.warehouse().toString());
      keys.putIfAbsent("checkpoint.interval", "5s");
      keys.putIfAbsent("sink.max-latency", "20s");
      keys.putAll(o.overrides());
      keys.put("kafka.bootstrap-servers", kafka.bootstrapServers());
      keys.put("kafka.topic", TOPIC);
      JobConfig config = JobConfig.fromMap(keys);

      Configuration flinkConf = new Configuration();
      flinkConf.set(RestOptions.PORT, o.uiPort());
      flinkConf.set(RestOptions.BIND_ADDRESS, "localhost");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironmentWithWebUI(flinkConf);
      env.setParallelism(o.parallelism());
      SpatialIngestJob.build(env, config, false);

      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong produced = new AtomicLong();
      Thread generator = new Thread(() -> generate(kafka.bootstrapServers(), o, stop, produced, out), "generator");
      generator.setDaemon(true);
      JobClient job = env.executeAsync("spatial-ingest demo");
      generator.start();
      out.println("Kafka broker:  " + kafka.bootstrapServers() + " (topic " + TOPIC + ")");
      out.println("Flink web UI:  http://localhost:" + o.uiPort() + "  (job " + job.getJobID() + ")");
      out.println("Iceberg table: " + config.namespace() + "." + config.table() + " in "
          + Catalogs.catalogLoader(config).loadCatalog().name() + " at " + config.warehouse());
      out.println("Logs:          " + System.getProperty("java.io.tmpdir") + "/spatial-ingest.log");
      out.println("Generating " + o.rate() + " records/s; one in " + o.polygonEvery() + " is a "
          + o.polygonVertices() + "-vertex polygon. " + (o.duration().isZero() ? "Ctrl-C stops."
          : "Stops after " + o.duration().toSeconds() + " s."));

      CountDownLatch finished = new CountDownLatch(1);
      Thread hook = new Thread(() -> {
        stop.set(true);
        try {
          finished.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException ignored) {
          Thread.currentThread().interrupt();
        }
      }, "demo-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);

      Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
      Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
      long deadline = o.duration().isZero() ? Long.MAX_VALUE : System.currentTimeMillis() + o.duration().toMillis();
      try {
        while (!stop.get() && System.currentTimeMillis() < deadline && !job.getJobStatus().get().isTerminalState()) {
          sleepUpTo(5_000, stop, deadline);
          printProgress(out, produced.get(), table);
        }
        stop.set(true);
        generator.join(10_000);
        out.println("Stopping: draining the job so every produced record commits ...");
        Path savepoints = Files.createTempDirectory("spatial-ingest-savepoint");
        job.stopWithSavepoint(true, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
            .get(120, TimeUnit.SECONDS);
        job.getJobExecutionResult().get(120, TimeUnit.SECONDS);
        printProgress(out, produced.get(), table);
        out.println("Done. Read the table with any Iceberg engine at " + config.warehouse());
        return 0;
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

  private static void generate(String bootstrap, Options o, AtomicBoolean stop, AtomicLong produced,
      PrintStream out) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(8 << 20));
    TelemetryGenerator gen = new TelemetryGenerator(System.nanoTime(), o.vehicles(), o.polygonEvery(),
        o.polygonVertices());
    long start = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      while (!stop.get()) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * o.rate());
        while (produced.get() < due && !stop.get()) {
          TelemetryGenerator.Record r = gen.next(System.currentTimeMillis());
          producer.send(new ProducerRecord<>(TOPIC, r.id().getBytes(), r.json()));
          produced.incrementAndGet();
        }
        Thread.sleep(5);
      }
      producer.flush();
    } catch (Exception e) {
      out.println("generator stopped: " + e);
    }
  }

  private static void printProgress(PrintStream out, long produced, Table table) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    int snapshots = 0;
    for (Snapshot ignored : table.snapshots()) {
      snapshots++;
    }
    String committed = current == null ? "0" : current.summary().getOrDefault("total-records", "0");
    String files = current == null ? "0" : current.summary().getOrDefault("total-data-files", "0");
    String age = current == null ? "-" : ((System.currentTimeMillis() - current.timestampMillis()) / 1000) + " s";
    out.printf("produced %,d | committed rows %,d | snapshots %d | data files %s | last commit %s ago%n", produced,
        Long.parseLong(committed), snapshots, files, age);
  }

  private static void sleepUpTo(long millis, AtomicBoolean stop, long deadline) throws InterruptedException {
    long until = Math.min(deadline, System.currentTimeMillis() + millis);
    while (!stop.get() && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
  }

  private static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress("localhost", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
