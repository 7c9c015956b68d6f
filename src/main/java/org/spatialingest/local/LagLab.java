package org.spatialingest.local;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.JobStart;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The lag lab: runs scenarios on the embedded stack (real broker, local Flink, local catalog) and
 * follows every event from ingress (Kafka timestamp) through processing start to the commit of the
 * snapshot holding it, so one can see where age accumulates — in the queue in front of the job, or
 * in the job.
 *
 * <p>Each scenario gets its own topic (one partition) and table, and runs the job at parallelism 1
 * so the admission cap (per source subtask) is the job's cap. The injected per-record delay is
 * artificial, added only by the lab.
 */
public final class LagLab {
  /** Processing-start times by Kafka offset, written by the probe inside the (in-process) job. */
  static final Map<String, Map<Long, Long>> PROCESSING_START = new ConcurrentHashMap<>();

  private LagLab() {}

  /** One scenario: an offered rate, an artificial processing delay, an admission cap (0 = none). */
  public record Scenario(
      String name,
      double offeredRate,
      long injectedDelayMicros,
      double admissionCap,
      String description) {}

  /** What the lab measured for one event. */
  public record Event(String id, long ingressMs, long processingStartMs, long committedMs) {}

  /** One commit of a scenario. */
  public record Commit(
      long snapshotId,
      long committedMs,
      long rows,
      int files,
      long oldestAgeMs,
      long batchSpanMs,
      Map<String, String> closedBy) {}

  /** What the lab measured for one scenario. */
  public record ScenarioResult(
      Scenario scenario,
      long produced,
      double offeredRateActual,
      double admittedRate,
      long backlogAtEndOfInput,
      double inputSeconds,
      double drainSeconds,
      boolean everyIdCommittedOnce,
      long duplicates,
      long missing,
      List<Event> events,
      List<Commit> commits,
      JobHealth health) {

    /** Every id committed exactly once, the job never restarted and no checkpoint failed. */
    public boolean passed() {
      return everyIdCommittedOnce && health.healthy();
    }
  }

  public static List<Scenario> defaultScenarios(
      double baseRate, double highRate, long delayMicros, double cap) {
    return List.of(
        new Scenario("baseline", baseRate, 0, 0, "low offered rate, no injected delay"),
        new Scenario(
            "overload",
            highRate,
            delayMicros,
            0,
            "high offered rate with an ARTIFICIAL per-record processing delay of "
                + delayMicros
                + " us"),
        new Scenario(
            "delay-removed",
            highRate,
            0,
            cap,
            "same high rate, no injected delay, admission cap of " + cap + " records/s still on"));
  }

  /**
   * Runs the scenarios one after the other, each on its own local cluster configured by {@link
   * LocalFlink} with {@code flinkOptions} (validated Flink options); restarts and failed
   * checkpoints are printed as they happen.
   */
  public static List<ScenarioResult> run(
      List<Scenario> scenarios,
      double inputSeconds,
      Path out,
      Map<String, String> flinkOptions,
      PrintStream log)
      throws Exception {
    Files.createDirectories(out);
    Configuration localhost = new Configuration();
    localhost.set(RestOptions.ADDRESS, "localhost");
    localhost.set(RestOptions.BIND_ADDRESS, "localhost");
    Configuration flinkConf = LocalFlink.configuration("lab", localhost, flinkOptions);
    log.println("checkpoints: " + LocalFlink.describeCheckpoints(flinkConf));
    boolean userRestPort =
        flinkOptions.containsKey(RestOptions.PORT.key())
            || flinkOptions.containsKey(RestOptions.BIND_PORT.key());
    List<ScenarioResult> results = new ArrayList<>();
    try (EmbeddedKafka kafka = EmbeddedKafka.start(Files.createTempDirectory("lab-kafka"))) {
      for (Scenario s : scenarios) {
        log.printf("scenario %s: %s%n", s.name(), s.description());
        Configuration scenarioConf = new Configuration(flinkConf);
        if (!userRestPort) {
          scenarioConf.set(
              RestOptions.PORT, freePort()); // one cluster after the other: never wait for a port
        }
        results.add(
            runScenario(kafka, s, inputSeconds, out.resolve("warehouse"), scenarioConf, log));
      }
    }
    LocalFlink.removeRunFolder(flinkConf); // every scenario's job ended
    return results;
  }

  private static ScenarioResult runScenario(
      EmbeddedKafka kafka,
      Scenario s,
      double inputSeconds,
      Path warehouse,
      Configuration flinkConf,
      PrintStream log)
      throws Exception {
    String topic = "lab-" + s.name();
    kafka.createTopic(topic, 1);
    Map<String, String> keys = new HashMap<>();
    keys.put("kafka.bootstrap-servers", kafka.bootstrapServers());
    keys.put("kafka.topic", topic);
    keys.put("kafka.group-id", "lab-" + s.name());
    keys.put("kafka.starting-offsets", "earliest");
    keys.put("catalog.warehouse", warehouse.toString());
    keys.put("table.namespace", "lab");
    keys.put("table.name", s.name().replace('-', '_'));
    keys.put("checkpoint.interval", "1s");
    keys.put("sink.max-latency", "2s");
    keys.put("admission.max-records-per-second", Double.toString(s.admissionCap()));
    JobConfig config = JobConfig.fromMap(keys);

    Map<Long, Long> processingStart = new ConcurrentHashMap<>();
    PROCESSING_START.put(topic, processingStart);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(1, flinkConf);
    SpatialIngestJob.configureCheckpointing(env, config);
    JobStart jobStart = SpatialIngestJob.decideStart(env, config);
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, false, jobStart)
            .map(new Probe(topic, s.injectedDelayMicros()))
            .name("lab-probe");
    SpatialIngestJob.Transformed transformed =
        SpatialIngestJob.transformWithRejects(records, config);
    SpatialIngestJob.sink(transformed, config, jobStart);
    JobClient job = env.executeAsync("lab " + s.name());
    JobHealthMonitor monitor =
        JobHealthMonitor.start(flinkConf.get(RestOptions.PORT), job.getJobID(), log, "  ");

    // offer input at the nominal rate; the actual rate is measured, not assumed
    Map<Long, String> idByOffset = new HashMap<>();
    Map<String, Long> ingressById = new HashMap<>();
    TelemetryGenerator generator = new TelemetryGenerator(s.name().hashCode(), 10, 0, 0);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    long produced = 0;
    long start = System.nanoTime();
    long startMs = System.currentTimeMillis();
    List<Future<RecordMetadata>> acks = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      long inputNanos = (long) (inputSeconds * 1e9);
      while (System.nanoTime() - start < inputNanos) {
        long due = (long) ((System.nanoTime() - start) / 1e9 * s.offeredRate());
        while (produced < due) {
          TelemetryGenerator.Record r = generator.next(System.currentTimeMillis());
          acks.add(producer.send(new ProducerRecord<>(topic, r.id().getBytes(), r.json())));
          ids.add(r.id());
          produced++;
        }
        Thread.sleep(2);
      }
      producer.flush();
    }
    double offeredSeconds = (System.nanoTime() - start) / 1e9;
    long processedAtEnd = processingStart.size();
    long backlog = produced - processedAtEnd;
    for (int i = 0; i < acks.size(); i++) {
      RecordMetadata m = acks.get(i).get();
      idByOffset.put(m.offset(), ids.get(i));
      ingressById.put(ids.get(i), m.timestamp());
    }
    log.printf(
        "  offered %d records in %.1f s (%.0f/s); backlog at end of input %d%n",
        produced, offeredSeconds, produced / offeredSeconds, backlog);

    // drain: every produced record must be committed
    Table table =
        Catalogs.catalogLoader(config).loadCatalog().loadTable(Catalogs.tableIdentifier(config));
    long drainStart = System.nanoTime();
    long deadline = System.currentTimeMillis() + 300_000;
    while (TableRows.total(table) < produced && System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
    }
    double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
    monitor.stopping(); // cancelling aborts the checkpoint in flight
    monitor.close();
    JobHealth health = monitor.health();
    job.cancel().get(60, TimeUnit.SECONDS);
    awaitGone(job);

    List<Commit> commits = new ArrayList<>();
    Map<String, Long> committedById = new HashMap<>();
    long duplicates = readCommits(table, commits, committedById);
    List<Event> events = new ArrayList<>();
    long missing = 0;
    for (Map.Entry<Long, String> e : idByOffset.entrySet()) {
      Long committed = committedById.get(e.getValue());
      if (committed == null) {
        missing++;
        continue;
      }
      events.add(
          new Event(
              e.getValue(),
              ingressById.get(e.getValue()),
              processingStart.getOrDefault(e.getKey(), -1L),
              committed));
    }
    events.sort((a, b) -> Long.compare(a.ingressMs(), b.ingressMs()));
    long admittedDuringInput =
        processingStart.values().stream()
            .filter(t -> t <= startMs + (long) (offeredSeconds * 1000))
            .count();
    PROCESSING_START.remove(topic);
    boolean once = duplicates == 0 && missing == 0 && committedById.size() == produced;
    log.printf(
        "  drained in %.1f s; committed %d of %d ids, %d duplicates, %d missing; %s%n",
        drainSeconds, committedById.size(), produced, duplicates, missing, health.describe());
    return new ScenarioResult(
        s,
        produced,
        produced / offeredSeconds,
        admittedDuringInput / offeredSeconds,
        backlog,
        offeredSeconds,
        drainSeconds,
        once,
        duplicates,
        missing,
        events,
        commits,
        health);
  }

  /**
   * Waits until the job is gone; the local per-job cluster shuts down with it, which also means
   * gone.
   */
  private static void awaitGone(JobClient job) throws InterruptedException {
    try {
      while (!job.getJobStatus().get().isGloballyTerminalState()) {
        Thread.sleep(50);
      }
    } catch (IllegalStateException | ExecutionException clusterAlreadyShutDown) {
      // nothing runs any more
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** Reads which snapshot committed each id; returns how many ids were committed more than once. */
  private static long readCommits(
      Table table, List<Commit> commits, Map<String, Long> committedById) throws Exception {
    table.refresh();
    Schema idOnly = table.schema().select("id");
    long duplicates = 0;
    List<Snapshot> snapshots = new ArrayList<>();
    table.snapshots().forEach(snapshots::add);
    snapshots.sort((a, b) -> Long.compare(a.sequenceNumber(), b.sequenceNumber()));
    for (Snapshot s : snapshots) {
      Map<String, String> summary = s.summary();
      if (!summary.containsKey(SnapshotSummaryKeys.BATCH_ID)) {
        continue;
      }
      Map<String, String> closedBy = new HashMap<>();
      summary.forEach(
          (k, v) -> {
            if (k.startsWith(SnapshotSummaryKeys.CLOSED_PREFIX)) {
              closedBy.put(k.substring(SnapshotSummaryKeys.CLOSED_PREFIX.length()), v);
            }
          });
      long minIngest = Long.parseLong(summary.get(SnapshotSummaryKeys.MIN_INGEST_MS));
      long maxIngest = Long.parseLong(summary.get(SnapshotSummaryKeys.MAX_INGEST_MS));
      commits.add(
          new Commit(
              s.snapshotId(),
              s.timestampMillis(),
              Long.parseLong(summary.get(SnapshotSummaryKeys.ROWS)),
              Integer.parseInt(summary.get(SnapshotSummaryKeys.FILES)),
              s.timestampMillis() - minIngest,
              maxIngest - minIngest,
              closedBy));
      for (DataFile f : SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles()) {
        try (CloseableIterable<Record> rows =
            Parquet.read(table.io().newInputFile(f.location()))
                .project(idOnly)
                .createReaderFunc(
                    fileSchema -> GenericParquetReaders.buildReader(idOnly, fileSchema))
                .build()) {
          for (Record r : rows) {
            if (committedById.put((String) r.getField("id"), s.timestampMillis()) != null) {
              duplicates++;
            }
          }
        }
      }
    }
    return duplicates;
  }

  /** Notes when the transform takes each record; adds the scenario's artificial delay. */
  static final class Probe implements MapFunction<SourceRecord, SourceRecord> {
    private final String topic;
    private final long delayMicros;

    Probe(String topic, long delayMicros) {
      this.topic = topic;
      this.delayMicros = delayMicros;
    }

    @Override
    public SourceRecord map(SourceRecord record) {
      PROCESSING_START.get(topic).put(record.offset, System.currentTimeMillis());
      if (delayMicros > 0) {
        LockSupport.parkNanos(delayMicros * 1_000); // ARTIFICIAL: stands in for a slow transform
      }
      return record;
    }
  }
}
