package example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.sink.BoundedIcebergSink;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.source.ResumeFilter;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.source.SourceRecordDeserializer;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.ResumeTags;
import org.spatialingest.table.SinkPositions;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.SourcePositionReader;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TablePositions;

/**
 * The job a user of the sink would copy (src/site/markdown/sink-api.md): Kafka → a transform of
 * their own → {@link BoundedIcebergSink}, into a table of their own schema, built from the sink's
 * public API only (nothing of {@code SpatialIngestJob} or the application's {@code config}), with
 * exactly-once resume from the table: the start is decided once, before the graph is built, and
 * passed as a value to the source, the resume filter and the sink. Outside {@code
 * org.spatialingest}, so nothing package-private is reachable.
 *
 * <p>Two starts without state over one topic commit every record once; the same job with its resume
 * broken on purpose (the source from the earliest offsets, no filter) duplicates, which the same
 * check sees; and the builder offers no way to a sink other than {@code append}.
 */
class KafkaToIcebergExampleTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);
  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final String SINK_ID = "example";

  /** The user's table: their columns, plus the two the resume reads (source, source_offset). */
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.StringType.get()),
          Types.NestedField.required(2, "event_time", Types.TimestampType.withZone()),
          Types.NestedField.required(3, "lon", Types.DoubleType.get()),
          Types.NestedField.required(4, "lat", Types.DoubleType.get()),
          Types.NestedField.required(5, "cell", Types.LongType.get()),
          Types.NestedField.required(6, "ingest_time", Types.TimestampType.withZone()),
          Types.NestedField.optional(7, "source", Types.StringType.get()),
          Types.NestedField.optional(8, "source_offset", Types.LongType.get()));

  /** Each row's source position, for the positions the sink records. */
  static final class Positions implements SourcePositionReader {
    @Override
    public StringData key(RowData row) {
      return row.getString(6);
    }

    @Override
    public long position(RowData row) {
      return row.getLong(7);
    }
  }

  /** Partitioned by day of {@code event_time}, files sorted by {@code cell}. */
  static final TableLayout LAYOUT =
      new TableLayout(SCHEMA, "event_time", 5, "cell", null, new Positions(), null, null);

  /** What a start without state begins from, decided once from the table and Kafka. */
  record Start(StartPositions positions, Map<TopicPartition, Long> offsets, long resumeAt) {}

  static Start decide(Table table, String bootstrap, String topic) throws Exception {
    KafkaIds ids;
    List<TopicPartition> partitions = new ArrayList<>();
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      description
          .partitions()
          .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
      ids =
          new KafkaIds(
              admin.describeCluster().clusterId().get(),
              Map.of(topic, description.topicId().toString()));
    }
    // this sink's positions that apply to this cluster and topic (not to one created again)
    Map<String, Long> recorded =
        TablePositions.readSink(table, SINK_ID).map(p -> p.applicableTo(ids)).orElse(Map.of());
    Map<TopicPartition, Long> offsets = new HashMap<>();
    for (TopicPartition tp : partitions) {
      Long at = recorded.get(SourceKeys.kafka(topic, tp.partition()));
      if (at != null) {
        offsets.put(tp, at);
      }
    }
    return new Start(
        new StartPositions(SINK_ID, ids, recorded, "", Map.of()),
        offsets,
        ResumeTags.pin(table, SINK_ID));
  }

  /** The user's transform: {@code id,epochMillis,lon,lat} text to a row of {@link #SCHEMA}. */
  static RowData parse(SourceRecord r) {
    String[] f = new String(r.value, StandardCharsets.UTF_8).split(",");
    double lon = Double.parseDouble(f[2]);
    double lat = Double.parseDouble(f[3]);
    return GenericRowData.of(
        StringData.fromString(f[0]),
        TimestampData.fromEpochMillis(Long.parseLong(f[1])),
        lon,
        lat,
        (long) ((lat + 90) * 1000) << 20 | (long) ((lon + 180) * 1000), // the user's own key
        TimestampData.fromEpochMillis(r.timestamp),
        StringData.fromString(SourceKeys.kafka(r.topic, r.partition)),
        r.offset);
  }

  /** The whole job, bounded at the offsets latest when it starts. */
  static void run(TableLoader loader, String topic, Start start, boolean resume) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    env.enableCheckpointing(300);
    KafkaSource<SourceRecord> source =
        KafkaSource.<SourceRecord>builder()
            .setBootstrapServers(kafka.bootstrapServers())
            .setTopics(topic)
            .setGroupId("example")
            .setProperty("isolation.level", "read_committed")
            .setStartingOffsets(
                resume
                    ? OffsetsInitializer.offsets(start.offsets(), OffsetResetStrategy.EARLIEST)
                    : OffsetsInitializer.earliest())
            .setBounded(OffsetsInitializer.latest())
            .setDeserializer(new SourceRecordDeserializer())
            .build();
    DataStream<SourceRecord> records =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka").uid("kafka");
    if (resume) {
      // skips what the table holds above the positions (files closed ahead of them)
      records =
          records
              .process(
                  new ResumeFilter(
                      loader,
                      null,
                      SINK_ID,
                      start.positions().ids(),
                      Map.of(),
                      new long[] {start.resumeAt(), -1}))
              .returns(SourceRecord.class)
              .uid("resume-filter");
    }
    DataStream<RowData> rows =
        records
            .map(KafkaToIcebergExampleTest::parse)
            .returns(InternalTypeInfo.of(LAYOUT.rowType()))
            .uid("parse");
    BoundedIcebergSink.forRowData()
        .table(loader, LAYOUT)
        .distribution(DistributionMode.RANGE)
        .closePolicy(
            ClosePolicyKind.BOUNDED,
            new SizingBounds(64L << 20, 8L << 20, Duration.ofSeconds(1), Duration.ofMillis(300)))
        .sinkId(SINK_ID, false)
        .startPositions(start.positions())
        .append(rows);
    env.execute("example");
  }

  @Test
  void twoStartsWithoutStateCommitEveryRecordOnceAndABrokenResumeIsSeen(@TempDir Path dir)
      throws Exception {
    String topic = "example-points";
    kafka.createTopic(topic, 2);
    Table table = createTable(dir);
    TableLoader loader =
        TableLoader.fromCatalog(
            CatalogLoader.hadoop(
                "example",
                new org.apache.hadoop.conf.Configuration(),
                Map.of("warehouse", dir.resolve("warehouse").toUri().toString())),
            TableIdentifier.of("db", "points"));

    produce(topic, 0, 300);
    run(loader, topic, decide(table, kafka.bootstrapServers(), topic), true);
    assertEveryIdOnce(table, 300);
    SinkPositions positions = TablePositions.readSink(table, SINK_ID).orElseThrow();
    assertThat(positions.offsets()).as("positions recorded for both partitions").hasSize(2);

    produce(topic, 300, 200);
    run(loader, topic, decide(table, kafka.bootstrapServers(), topic), true);
    assertEveryIdOnce(table, 500);

    // the same job with its resume broken on purpose: the check above sees the duplicates
    run(loader, topic, decide(table, kafka.bootstrapServers(), topic), false);
    assertThatThrownBy(() -> assertEveryIdOnce(table, 500))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("duplicate");
  }

  /** {@code append} is the only way from the builder to a running sink. */
  @Test
  void theBuilderGivesASinkOnlyThroughAppend() {
    for (Method m : BoundedIcebergSink.Builder.class.getDeclaredMethods()) {
      if (Modifier.isPublic(m.getModifiers())) {
        assertThat(Sink.class.isAssignableFrom(m.getReturnType()))
            .as("public %s returns a Sink", m.getName())
            .isFalse();
      }
    }
  }

  private static Table createTable(Path dir) {
    var catalog = new org.apache.iceberg.hadoop.HadoopCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    catalog.initialize("example", Map.of("warehouse", dir.resolve("warehouse").toUri().toString()));
    return catalog.createTable(
        TableIdentifier.of("db", "points"),
        SCHEMA,
        PartitionSpec.builderFor(SCHEMA).day("event_time").build());
  }

  private static void produce(String topic, int first, int count) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    long now = System.currentTimeMillis();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = first; i < first + count; i++) {
        String value =
            "p" + i + "," + (now + i) + "," + (i * 7.3 % 360 - 180) + "," + (i * 3.1 % 180 - 90);
        producer
            .send(new ProducerRecord<>(topic, i % 2, null, value.getBytes(StandardCharsets.UTF_8)))
            .get(30, TimeUnit.SECONDS);
      }
    }
  }

  private static void assertEveryIdOnce(Table table, int expected) throws Exception {
    table.refresh();
    Map<String, Integer> seen = new HashMap<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).select("id").build()) {
      for (Record r : rows) {
        String id = (String) r.getField("id");
        if (seen.merge(id, 1, Integer::sum) > 1) {
          throw new AssertionError("duplicate row " + id);
        }
      }
    }
    assertThat(seen).hasSize(expected);
  }
}
