package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.Catalogs;

/** Shared helpers of the integration tests: produce generated telemetry, read the table back. */
public final class TestKit {
  private TestKit() {}

  public static JobConfig config(
      String bootstrap, String topic, Path warehouse, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>();
    m.put("kafka.bootstrap-servers", bootstrap);
    m.put("kafka.topic", topic);
    m.put("kafka.group-id", "it-" + topic);
    m.put("kafka.starting-offsets", "earliest");
    m.put("catalog.type", "hadoop");
    m.put("catalog.warehouse", warehouse.toString());
    m.put("checkpoint.interval", "300ms");
    m.putAll(extra);
    return JobConfig.fromMap(m);
  }

  /** Produces {@code count} generated records; returns them by id. */
  public static Map<String, TelemetryGenerator.Record> produce(
      String bootstrap, String topic, TelemetryGenerator generator, int count) throws Exception {
    return produce(bootstrap, topic, generator, count, null);
  }

  /**
   * Produces {@code count} generated records to {@code partition} (null: by key); returns them by
   * id.
   */
  public static Map<String, TelemetryGenerator.Record> produce(
      String bootstrap, String topic, TelemetryGenerator generator, int count, Integer partition)
      throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(16 << 20));
    // on a loaded 2-core machine a produce request can take long; a request that times out is
    // retried and the
    // idempotent producer's retry can then be refused as out of order until the delivery timeout,
    // so wait instead
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    Map<String, TelemetryGenerator.Record> sent = new HashMap<>();
    List<Future<RecordMetadata>> acks = new ArrayList<>();
    long t0 = System.currentTimeMillis() - 60_000;
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < count; i++) {
        TelemetryGenerator.Record r = generator.next(t0 + i * 10L);
        sent.put(r.id(), r);
        acks.add(
            producer.send(new ProducerRecord<>(topic, partition, r.id().getBytes(), r.json())));
      }
      producer.flush();
    }
    for (Future<RecordMetadata> ack : acks) {
      ack.get();
    }
    return sent;
  }

  /** Produces raw record values (keyed by index). */
  public static void produceValues(String bootstrap, String topic, List<byte[]> values)
      throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        acks.add(
            producer.send(
                new ProducerRecord<>(topic, Integer.toString(i).getBytes(), values.get(i))));
      }
      for (Future<RecordMetadata> ack : acks) {
        ack.get();
      }
    }
  }

  /**
   * Cancels a job and waits until it is really gone, so nothing writes into a temporary folder
   * being deleted.
   */
  public static void cancelAndWait(org.apache.flink.core.execution.JobClient job) throws Exception {
    job.cancel().get(60, java.util.concurrent.TimeUnit.SECONDS);
    long deadline = System.currentTimeMillis() + 60_000;
    while (!job.getJobStatus().get().isGloballyTerminalState()
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
  }

  /** Ids of the rows, failing on duplicates. */
  public static java.util.Set<String> distinctIds(List<Record> rows) {
    java.util.Set<String> ids = new java.util.HashSet<>();
    for (Record r : rows) {
      if (!ids.add((String) r.getField("id"))) {
        throw new AssertionError("duplicate row " + r.getField("id"));
      }
    }
    return ids;
  }

  /**
   * The telemetry table of {@code config}, created empty if it does not exist (as a job's start
   * does).
   */
  public static Table newTable(JobConfig config) {
    return org.spatialingest.table.TableBootstrap.ensureTable(
        Catalogs.catalogLoader(config).loadCatalog(),
        Catalogs.tableIdentifier(config),
        org.spatialingest.table.TelemetryTable.LAYOUT,
        config.partitioning());
  }

  public static Table table(JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    return catalog.loadTable(Catalogs.tableIdentifier(config));
  }

  /**
   * The rows of one data file of {@code table}, in file order (Iceberg's generic Parquet reader).
   */
  public static CloseableIterable<Record> fileRows(Table table, DataFile file) {
    return Parquet.read(table.io().newInputFile(file.location()))
        .project(table.schema())
        .createReaderFunc(s -> GenericParquetReaders.buildReader(table.schema(), s))
        .build();
  }

  public static List<Record> rows(Table table) throws Exception {
    table.refresh();
    List<Record> out = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return out;
    }
    assertEachFileListedOnce(table);
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).build()) {
      for (Record r : it) {
        out.add(r.copy());
      }
    }
    return out;
  }

  /**
   * The current snapshot lists each data manifest once and each live data file once. A commit made
   * twice (a re-commit after a restore that did not see its first one) appends the same manifest or
   * files again, and a scan does not show it: Iceberg's {@code ManifestGroup} keeps a set of
   * manifests. The snapshot's record count, a later manifest rewrite and other engines do count
   * them twice, so every read of rows in a test checks the table's lists first.
   */
  public static void assertEachFileListedOnce(Table table) throws IOException {
    if (table.currentSnapshot() == null) {
      return;
    }
    List<ManifestFile> manifests = table.currentSnapshot().dataManifests(table.io());
    Set<String> manifestPaths = new HashSet<>();
    Set<String> files = new HashSet<>();
    for (ManifestFile manifest : manifests) {
      assertThat(manifestPaths.add(manifest.path()))
          .as("manifest %s listed twice in the current snapshot of %s", manifest.path(), table)
          .isTrue();
      try (ManifestReader<DataFile> reader =
          ManifestFiles.read(manifest, table.io(), table.specs())) {
        for (DataFile file : reader) {
          assertThat(files.add(file.location()))
              .as("data file %s listed twice in the current snapshot of %s", file.location(), table)
              .isTrue();
        }
      }
    }
  }

  /**
   * Waits until the sink has staged at least {@code rows} rows of {@code table} (checkpoint
   * barriers passed the writers with those rows buffered), reading the row counts in the staging
   * runs' headers.
   */
  public static void awaitStagedRows(Table table, long rows) throws Exception {
    java.nio.file.Path staging =
        java.nio.file.Path.of(java.net.URI.create(table.location() + "/_staging"));
    long deadline = System.currentTimeMillis() + 90_000;
    long staged = 0;
    while (System.currentTimeMillis() < deadline) {
      staged = 0;
      if (java.nio.file.Files.isDirectory(staging)) {
        try (var files = java.nio.file.Files.walk(staging)) {
          for (java.nio.file.Path run :
              files.filter(p -> p.toString().endsWith(".rows")).toList()) {
            try (var in = java.nio.file.Files.newInputStream(run)) {
              staged += org.spatialingest.sink.write.SinkFiles.stagedRows(in);
            } catch (java.io.IOException e) {
              // being written or deleted: counted next time
            }
          }
        }
      }
      if (staged >= rows) {
        return;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("only " + staged + " of " + rows + " rows were staged in time");
  }

  /**
   * Lists the table's location (outside {@code metadata/}) against its metadata: every file must be
   * a data file some snapshot added. Staging runs and uncommitted data files left by failures fail
   * this.
   */
  public static void assertNoOrphans(Table table) throws Exception {
    List<String> orphans = orphans(table);
    if (!orphans.isEmpty()) {
      throw new AssertionError(
          orphans.size()
              + " files in "
              + table.location()
              + " that no snapshot references: "
              + orphans);
    }
  }

  /** Files in the table's location (outside {@code metadata/}) that no snapshot added. */
  public static List<String> orphans(Table table) throws Exception {
    table.refresh();
    java.util.Set<String> referenced = new java.util.HashSet<>();
    for (org.apache.iceberg.Snapshot s : table.snapshots()) {
      for (org.apache.iceberg.DataFile f :
          org.apache.iceberg.SnapshotChanges.builderFor(table)
              .snapshot(s)
              .build()
              .addedDataFiles()) {
        referenced.add(java.nio.file.Path.of(java.net.URI.create(f.location())).toString());
      }
    }
    java.nio.file.Path root = java.nio.file.Path.of(java.net.URI.create(table.location()));
    java.nio.file.Path metadata = root.resolve("metadata");
    List<String> orphans = new ArrayList<>();
    if (!java.nio.file.Files.exists(root)) {
      return orphans;
    }
    try (var files = java.nio.file.Files.walk(root)) {
      files
          .filter(java.nio.file.Files::isRegularFile)
          .filter(p -> !p.startsWith(metadata))
          .filter(p -> !p.getFileName().toString().startsWith(".")) // Hadoop's .crc side files
          .map(java.nio.file.Path::toString)
          // a live job's lease (a killed one's stays until the next job of its sink id takes it)
          .filter(p -> !org.spatialingest.sink.core.SinkFileNames.isLease(p))
          .filter(p -> !referenced.contains(p))
          .forEach(orphans::add);
    }
    return orphans;
  }

  public static byte[] bytes(Object byteBuffer) {
    ByteBuffer b = ((ByteBuffer) byteBuffer).duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /**
   * A Flink configuration that restarts a failed job up to {@code attempts} times, 200 ms apart
   * (the tests that inject failures).
   */
  public static Configuration fixedDelayRestarts(int attempts) {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, attempts);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    return conf;
  }
}
