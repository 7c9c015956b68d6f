package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.io.WKBReader;
import org.locationtech.jts.operation.valid.IsValidOp;
import org.spatialingest.config.JobConfig;
import org.spatialingest.deadletter.DeadLetterSerializer;
import org.spatialingest.geometry.BadInputCorpus;
import org.spatialingest.geometry.RejectReason;
import org.spatialingest.geometry.Shapes;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.Catalogs;

/**
 * The bad-input corpus mixed with good records (points, a 100k-vertex star, a ring with holes, a
 * bow-tie, an antimeridian multipolygon, region refreshes, the first and last event times the table
 * holds, a record followed by whitespace, shapes with thousands of holes that fit the geometry
 * budget) through the real job: broker, MiniCluster, Iceberg catalog. Nothing restarts, every bad
 * record is in the rejects table with its reason, message and origin, and input = rows + rejects.
 * The second test sends the corpus through the file source, one record a line.
 */
class RejectsCorpusTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void everyRecordEndsInTheTableOrInRejectsWithItsReason(
      @TempDir Path warehouse, @InjectMiniCluster MiniCluster miniCluster) throws Exception {
    String topic = "corpus";
    kafka.createTopic(topic, 2);
    Map<String, byte[]> good = new HashMap<>(); // id -> value
    List<byte[]> refreshes = new ArrayList<>();
    refreshes.add(
        bytes(
            Shapes.record(
                "refresh-west",
                Shapes.geoJson(Shapes.box(-10, 30, 0, 70, 4)),
                "{\"kind\":\"boundary_refresh\",\"region\":\"west\"}")));
    refreshes.add(
        bytes(
            Shapes.record(
                "refresh-east",
                Shapes.geoJson(Shapes.box(0, 30, 40, 70, 4)),
                "{\"kind\":\"boundary_refresh\",\"region\":\"east\"}")));
    good.put("refresh-west", refreshes.get(0));
    good.put("refresh-east", refreshes.get(1));

    List<byte[]> mixed = new ArrayList<>();
    TelemetryGenerator gen = new TelemetryGenerator(11, 5, 0, 0);
    for (int i = 0; i < 400; i++) {
      TelemetryGenerator.Record r = gen.next(1_795_946_400_000L + i * 1000L);
      good.put(r.id(), r.json());
      mixed.add(r.json());
    }
    edgeRecords()
        .forEach(
            (id, v) -> {
              good.put(id, v);
              mixed.add(v);
            });
    Map<String, String> shapes =
        Map.of(
            "star-100k", Shapes.geoJsonRounded(Shapes.star(5, 45, 100_000, 1.0)),
            "ring-holes", Shapes.geoJsonRounded(Shapes.ringWithHoles(20, 50, 4_000, 5)),
            "bow-tie", Shapes.geoJsonRounded(Shapes.bowTie(2, 42, 1, 2_000)),
            "antimeridian", Shapes.geoJsonRounded(Shapes.antimeridian(-17, 2, 1_000)));
    shapes.forEach(
        (id, geometry) -> {
          byte[] v = bytes(Shapes.record(id, geometry, "{\"vehicle\":\"shape\"}"));
          good.put(id, v);
          mixed.add(v);
        });
    List<BadInputCorpus.Bad> bad = BadInputCorpus.all();
    bad.forEach(b -> mixed.add(b.value()));
    Collections.shuffle(mixed, new Random(3));
    List<byte[]> all = new ArrayList<>(refreshes);
    all.addAll(mixed);
    produce(topic, all);

    Map<String, String> keys = new HashMap<>(BadInputCorpus.CONFIG);
    keys.put("sink.max-latency", "1s");
    keys.put("rejects.dead-letter-topic", "corpus-dlt");
    kafka.createTopic("corpus-dlt", 1);
    JobConfig config = TestKit.config(kafka.bootstrapServers(), topic, warehouse, keys);
    Configuration conf = TestKit.fixedDelayRestarts(3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    JobClient client = env.executeAsync("corpus");
    JobID jobId = client.getJobID();
    client.getJobExecutionResult().get();

    // zero restarts: a failure (even one the restart strategy recovered from) leaves failure info
    // in the graph
    assertThat(miniCluster.getArchivedExecutionGraph(jobId).get().getFailureInfo())
        .as("job failures")
        .isNull();

    List<Record> rows = TestKit.rows(TestKit.table(config));
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    Table rejectsTable = catalog.loadTable(Catalogs.rejectsTableIdentifier(config));
    List<Record> rejects = TestKit.rows(rejectsTable);

    assertThat(rows.size() + rejects.size())
        .as("input = committed rows + rejected rows")
        .isEqualTo(all.size());
    assertThat(TestKit.distinctIds(rows)).isEqualTo(good.keySet());
    assertThat(rejects).hasSize(bad.size());
    assertThat(rejectsTable.spec().fields())
        .singleElement()
        .satisfies(f -> assertThat(f.name()).isEqualTo("ingest_time_day"));

    Map<String, Record> rejectByRaw = new HashMap<>();
    for (Record r : rejects) {
      assertThat(
              rejectByRaw.put(
                  new String(TestKit.bytes(r.getField("raw")), StandardCharsets.ISO_8859_1), r))
          .as("one reject per bad record")
          .isNull();
    }
    for (BadInputCorpus.Bad b : bad) {
      byte[] expectedRaw =
          b.reason() == RejectReason.RECORD_TOO_LARGE
              ? Arrays.copyOf(b.value(), BadInputCorpus.MAX_BYTES)
              : b.value();
      Record r = rejectByRaw.get(new String(expectedRaw, StandardCharsets.ISO_8859_1));
      assertThat(r).as("%s is in rejects", b.name()).isNotNull();
      assertThat(r.getField("reason")).as(b.name()).isEqualTo(b.reason().code());
      assertThat(r.getField("raw_size")).as(b.name()).isEqualTo((long) b.value().length);
      assertMessage(r, b);
      assertThat(r.getField("topic")).isEqualTo(topic);
      assertThat((Integer) r.getField("partition")).isBetween(0, 1);
      assertThat((Long) r.getField("offset")).isNotNegative();
      assertThat(r.getField("file")).isNull();
      assertThat(r.getField("ingest_time")).isNotNull();
      assertThat(r.getField("rejected_at")).isNotNull();
    }

    // the dead-letter topic got every reject too (at-least-once: no duplicates expected without
    // failures)
    Map<String, String> dltReasons = new HashMap<>();
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.assign(List.of(new TopicPartition("corpus-dlt", 0)));
      long deadline = System.currentTimeMillis() + 30_000;
      while (dltReasons.size() < bad.size() && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          String reason =
              new String(r.headers().lastHeader("reason").value(), StandardCharsets.UTF_8);
          assertThat(dltReasons.put(new String(r.value(), StandardCharsets.ISO_8859_1), reason))
              .isNull();
        }
      }
    }
    assertThat(dltReasons).hasSize(bad.size());
    for (BadInputCorpus.Bad b : bad) {
      byte[] expectedRaw =
          b.value().length > DeadLetterSerializer.MAX_VALUE_BYTES
              ? Arrays.copyOf(b.value(), DeadLetterSerializer.MAX_VALUE_BYTES)
              : b.value();
      assertThat(dltReasons.get(new String(expectedRaw, StandardCharsets.ISO_8859_1)))
          .as(b.name())
          .isEqualTo(b.reason().code());
    }

    WKBReader wkb = new WKBReader();
    int withRegion = 0;
    for (Record row : rows) {
      String id = (String) row.getField("id");
      Geometry g = wkb.read(TestKit.bytes(row.getField("geometry")));
      assertThat(IsValidOp.isValid(g)).as("%s is valid", id).isTrue();
      if (id.startsWith("rec-")) {
        assertThat((String) row.getField("vehicle")).startsWith("v");
        assertThat(row.getField("speed_kmh")).isNotNull();
        assertThat((String) row.getField("properties"))
            .doesNotContain("speed_kmh")
            .doesNotContain("vehicle");
        Object region = row.getField("region");
        if (region
            != null) { // rows racing the refreshes may see none; a region seen must be the right
          // one
          withRegion++;
          double x = g.getCoordinate().x;
          assertThat(region).as("region of %s at x=%s", id, x).isEqualTo(x < 0 ? "west" : "east");
        }
      }
    }
    assertThat(withRegion).as("points enriched from the broadcast regions").isPositive();
    Record bowTie =
        rows.stream().filter(r -> "bow-tie".equals(r.getField("id"))).findFirst().orElseThrow();
    assertThat(bowTie.getField("geometry_type")).as("repaired").isEqualTo("MultiPolygon");
    Record star =
        rows.stream().filter(r -> "star-100k".equals(r.getField("id"))).findFirst().orElseThrow();
    assertThat(wkb.read(TestKit.bytes(star.getField("geometry"))).getNumPoints())
        .isEqualTo(100_001);
    Set<String> types = new HashSet<>();
    rows.forEach(r -> types.add((String) r.getField("geometry_type")));
    assertThat(types).contains("Point", "Polygon", "MultiPolygon");
    assertEdgeRows(rows);
  }

  @Test
  void theCorpusAsLinesOfFilesEndsInTheTableOrInRejectsWithFileAndLine(
      @TempDir Path tmp, @InjectMiniCluster MiniCluster miniCluster) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("input"));
    Map<String, byte[]> good = new HashMap<>(edgeRecords());
    TelemetryGenerator gen = new TelemetryGenerator(12, 5, 0, 0);
    for (int i = 0; i < 200; i++) {
      TelemetryGenerator.Record r = gen.next(1_795_946_400_000L + i * 1000L);
      good.put(r.id(), r.json());
    }
    List<BadInputCorpus.Bad> bad = new ArrayList<>();
    for (BadInputCorpus.Bad b : BadInputCorpus.all()) {
      if (isOneLine(
          b.value())) { // the empty value is a blank line to the file source, not a record
        bad.add(b);
      }
    }
    assertThat(bad).hasSizeGreaterThan(BadInputCorpus.all().size() - 2);
    List<byte[]> lines = new ArrayList<>(good.values());
    bad.forEach(b -> lines.add(b.value()));
    Collections.shuffle(lines, new Random(5));
    Map<String, BadInputCorpus.Bad> badAt = new HashMap<>(); // "file:line" -> entry
    for (int f = 0; f < 2; f++) {
      Path file = dir.resolve("part-" + f + ".ndjson");
      try (var out = Files.newOutputStream(file)) {
        int line = 0;
        for (int i = f; i < lines.size(); i += 2) {
          out.write(lines.get(i));
          out.write(f == 0 ? new byte[] {'\n'} : new byte[] {'\r', '\n'});
          line++;
          for (BadInputCorpus.Bad b : bad) {
            if (b.value() == lines.get(i)) {
              badAt.put(file.toUri().getPath() + ":" + line, b);
            }
          }
        }
      }
    }
    assertThat(badAt).hasSize(bad.size());

    Map<String, String> keys = new HashMap<>(BadInputCorpus.CONFIG);
    keys.put("source", "file:" + dir);
    keys.put("catalog.warehouse", tmp.resolve("warehouse").toString());
    keys.put("checkpoint.interval", "300ms");
    keys.put("sink.max-latency", "1s");
    JobConfig config = JobConfig.fromMap(keys);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(new Configuration());
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    JobClient client = env.executeAsync("corpus-files");
    JobID jobId = client.getJobID();
    client.getJobExecutionResult().get();
    assertThat(miniCluster.getArchivedExecutionGraph(jobId).get().getFailureInfo())
        .as("job failures")
        .isNull();

    List<Record> rows = TestKit.rows(TestKit.table(config));
    List<Record> rejects =
        TestKit.rows(
            Catalogs.catalogLoader(config)
                .loadCatalog()
                .loadTable(Catalogs.rejectsTableIdentifier(config)));
    assertThat(TestKit.distinctIds(rows)).isEqualTo(good.keySet());
    assertThat(rows.size() + rejects.size()).as("lines = rows + rejects").isEqualTo(lines.size());
    Set<String> seen = new HashSet<>();
    for (Record r : rejects) {
      String where =
          ((String) r.getField("file")).replaceFirst("^file:", "") + ":" + r.getField("line");
      BadInputCorpus.Bad b = badAt.get(where);
      assertThat(b).as("a corpus entry at %s", where).isNotNull();
      assertThat(seen.add(where)).as("once: %s", where).isTrue();
      assertThat(r.getField("reason")).as(b.name()).isEqualTo(b.reason().code());
      assertMessage(r, b);
      assertThat(r.getField("topic")).isNull();
    }
    assertThat(seen).hasSize(bad.size());
    assertEdgeRows(rows);
  }

  /**
   * Records at the edges of the contract that must be committed: the first and last millisecond of
   * 0001-01-01..9999-12-31 as epoch millis and as ISO-8601 (Z and with an offset), a record
   * followed by whitespace, 3,600 disjoint holes (validated within the budget) and a bow-tie shell
   * with 400 holes (repaired within it).
   */
  private static Map<String, byte[]> edgeRecords() {
    Map<String, byte[]> m = new HashMap<>();
    EDGE_TIMES.forEach(
        (id, time) ->
            m.put(
                id,
                bytes(
                    "{\"id\":\""
                        + id
                        + "\",\"event_time\":"
                        + time
                        + ",\"geometry\":\"POINT(7 "
                        + (m.size() + 1)
                        + ")\"}")));
    m.put(
        "trailing-whitespace",
        bytes(
            "{\"id\":\"trailing-whitespace\",\"event_time\":1795946400000,"
                + "\"geometry\":\"POINT(7 9)\"} \t "));
    m.put(
        "holes-3600",
        bytes(
            Shapes.record(
                "holes-3600",
                "\"" + Shapes.wktRounded(Shapes.gridOfHoles(25, 45, 60, 16, 0.5, false)) + "\"",
                null)));
    m.put(
        "bow-tie-400-holes",
        bytes(
            Shapes.record(
                "bow-tie-400-holes",
                "\"" + Shapes.wktRounded(Shapes.gridOfHoles(28, 45, 20, 16, 0.5, true)) + "\"",
                null)));
    return m;
  }

  /**
   * id -> event_time JSON of the edge records; {@link #assertEdgeRows} checks each stored instant.
   */
  private static final Map<String, String> EDGE_TIMES =
      Map.of(
          "time-min-epoch", "-62135596800000",
          "time-max-epoch", "253402300799999",
          "time-min-iso", "\"0001-01-01T00:00:00Z\"",
          "time-max-iso", "\"9999-12-31T23:59:59.999Z\"",
          "time-min-offset", "\"0001-01-01T01:00:00+01:00\"",
          "time-max-offset", "\"9999-12-31T22:59:59.999-01:00\"");

  private static void assertEdgeRows(List<Record> rows) {
    Map<String, Record> byId = new HashMap<>();
    rows.forEach(r -> byId.put((String) r.getField("id"), r));
    EDGE_TIMES
        .keySet()
        .forEach(
            id -> {
              OffsetDateTime t = (OffsetDateTime) byId.get(id).getField("event_time");
              assertThat(t.toInstant())
                  .as(id)
                  .isEqualTo(
                      id.contains("min")
                          ? Instant.parse("0001-01-01T00:00:00Z")
                          : Instant.parse("9999-12-31T23:59:59.999Z"));
            });
    assertThat(byId.get("bow-tie-400-holes").getField("geometry_type"))
        .as("repaired")
        .isEqualTo("MultiPolygon");
    assertThat(byId.get("holes-3600").getField("geometry_type")).isEqualTo("Polygon");
    assertThat(byId).containsKey("trailing-whitespace");
  }

  private static void assertMessage(Record reject, BadInputCorpus.Bad b) {
    assertThat((String) reject.getField("message"))
        .as(b.name())
        .isNotNull()
        .contains(b.message() == null ? "" : b.message());
  }

  private static boolean isOneLine(byte[] value) {
    boolean blank = true;
    for (byte c : value) {
      if (c == '\n' || c == '\r') {
        return false;
      }
      blank &= c == ' ' || c == '\t';
    }
    return !blank;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void produce(String topic, List<byte[]> values) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(16 << 20));
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        acks.add(producer.send(new ProducerRecord<>(topic, i % 2, null, values.get(i))));
      }
      for (Future<RecordMetadata> ack : acks) {
        ack.get();
      }
    }
  }
}
