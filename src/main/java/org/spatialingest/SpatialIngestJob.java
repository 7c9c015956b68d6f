package org.spatialingest;

import java.util.Properties;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.RegionEnrichment;
import org.spatialingest.geometry.TelemetryTransform;
import org.spatialingest.sink.BoundedIcebergSink;
import org.spatialingest.sink.Catalogs;
import org.spatialingest.sink.DeadLetterSerializer;
import org.spatialingest.sink.ClosePolicy;
import org.spatialingest.sink.TableBootstrap;
import org.spatialingest.sink.TableLayout;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.source.TelemetrySources;

/**
 * Assembles the pipeline: source (Kafka, or a bounded file source) → geometry transform (+ region enrichment) →
 * bounded Iceberg sink, with the transform's rejects → a second bounded sink into {@code <table>_rejects}. Each stage
 * is its own method so tests (and future sources) can compose them; operator uids are stable so savepoints survive
 * upgrades.
 */
public final class SpatialIngestJob {
  public static final String SOURCE_UID = "kafka-source";
  public static final String FILE_SOURCE_UID = "file-source";
  public static final String TRANSFORM_UID = "geometry-transform";
  public static final String REGIONS_UID = "region-enrichment";
  public static final String SINK_UID = "spatial-sink";
  public static final String REJECTS_SINK_UID = "rejects-sink";
  public static final String DEAD_LETTER_UID = "dead-letter-sink";
  /** Rejects are normally rare: one writer keeps their files few; raise it only if rejects backpressure the job. */
  public static final int REJECTS_SINK_PARALLELISM = 1;

  private static final Logger LOG = LoggerFactory.getLogger(SpatialIngestJob.class);

  private SpatialIngestJob() {}

  /** The transform's two outputs: table rows (after region enrichment, if on) and rejects-table rows. */
  public record Transformed(DataStream<RowData> rows, DataStream<RowData> rejects) {}

  /** Applies checkpointing to the environment and builds the whole pipeline. */
  public static void build(StreamExecutionEnvironment env, JobConfig config, boolean boundedSource) {
    configureCheckpointing(env, config);
    Transformed t = transformWithRejects(source(env, config, boundedSource), config);
    sink(t.rows(), config);
    rejectsSink(t.rejects(), config);
  }

  public static void configureCheckpointing(StreamExecutionEnvironment env, JobConfig config) {
    env.enableCheckpointing(config.checkpointInterval().toMillis(), CheckpointingMode.EXACTLY_ONCE);
    var bounds = config.sizingBounds();
    LOG.info("Sink bounds: memory budget M={} bytes per writer, target file T={} bytes, max latency L={}, "
            + "checkpoint interval C={}, close policy {}", bounds.memoryBytes(), bounds.targetFileBytes(),
        bounds.maxLatency(), bounds.checkpointInterval(), config.closePolicy());
    if (bounds.latencyShorterThanCheckpoint()) {
      LOG.warn("sink.max-latency ({}) is shorter than checkpoint.interval ({}): every checkpoint will close every "
          + "file, and rows wait up to one checkpoint interval anyway", bounds.maxLatency(), bounds.checkpointInterval());
    }
  }

  /**
   * The configured source: Kafka ({@code bounded}: stop at the offsets latest at start) or {@code file:<path>}
   * (always bounded).
   */
  public static DataStream<SourceRecord> source(StreamExecutionEnvironment env, JobConfig config, boolean bounded) {
    SingleOutputStreamOperator<SourceRecord> stream;
    if (config.input().fileSource()) {
      stream = env.fromSource(TelemetrySources.file(config.input().filePath()), WatermarkStrategy.noWatermarks(),
              "file-source")
          .uid(FILE_SOURCE_UID);
    } else {
      stream = env.fromSource(TelemetrySources.source(config, bounded), WatermarkStrategy.noWatermarks(),
              "kafka-source")
          .uid(SOURCE_UID);
    }
    return withParallelism(stream, config.sourceParallelism());
  }

  /** Table rows only (rejects are counted, not written); the whole job uses {@link #transformWithRejects}. */
  public static DataStream<RowData> transform(DataStream<SourceRecord> records, JobConfig config) {
    return transformWithRejects(records, config).rows();
  }

  /**
   * The transform operator (its own parallelism, {@code parallelism.transform}) with the rejects side output and,
   * when {@code regions.refresh-kind} is set, the region enrichment operator (same parallelism) fed by the
   * transform's boundary refreshes through broadcast state.
   */
  public static Transformed transformWithRejects(DataStream<SourceRecord> records, JobConfig config) {
    TableLayout layout = TelemetryTable.layout(config);
    SingleOutputStreamOperator<RowData> rows = records
        .process(new TelemetryTransform(HilbertCurve.CRS84, config))
        .returns(InternalTypeInfo.of(layout.rowType()))
        .name("geometry-transform")
        .uid(TRANSFORM_UID);
    rows = withParallelism(rows, config.transformParallelism());
    DataStream<RowData> rejects = rows.getSideOutput(TelemetryTransform.REJECTS);
    if (!config.regions().enabled()) {
      return new Transformed(rows, rejects);
    }
    BroadcastStream<org.spatialingest.geometry.RegionRefresh> refreshes =
        rows.getSideOutput(TelemetryTransform.REFRESHES).broadcast(RegionEnrichment.REGIONS);
    SingleOutputStreamOperator<RowData> enriched = rows.connect(refreshes)
        .process(new RegionEnrichment(layout.rowType()))
        .returns(InternalTypeInfo.of(layout.rowType()))
        .name("region-enrichment")
        .uid(REGIONS_UID);
    return new Transformed(withParallelism(enriched, config.transformParallelism()), rejects);
  }

  public static void sink(DataStream<RowData> rows, JobConfig config) {
    TableLayout layout = TelemetryTable.layout(config);
    BoundedIcebergSink sink = boundedSink(config, Catalogs.tableIdentifier(config), Catalogs.tableLoader(config),
        layout, config.partitioning(), SINK_UID);
    var sinkStream = rows.sinkTo(sink).name("spatial-sink").uid(SINK_UID);
    if (config.sinkParallelism() > 0) {
      sinkStream.setParallelism(config.sinkParallelism());
    }
  }

  /**
   * Rejects into {@code <table>_rejects}, day-partitioned by ingest time, through the same bounded sink (exactly
   * once); with {@code rejects.dead-letter-topic} also to that Kafka topic (at-least-once).
   */
  public static void rejectsSink(DataStream<RowData> rejects, JobConfig config) {
    BoundedIcebergSink sink = boundedSink(config, Catalogs.rejectsTableIdentifier(config),
        Catalogs.rejectsTableLoader(config), RejectsTable.LAYOUT, JobConfig.TimePartitioning.DAY, REJECTS_SINK_UID);
    rejects.sinkTo(sink).name("rejects-sink").uid(REJECTS_SINK_UID).setParallelism(REJECTS_SINK_PARALLELISM);
    if (!config.deadLetterTopic().isEmpty()) {
      Properties props = new Properties();
      props.putAll(config.kafkaProperties());
      KafkaSink<RowData> deadLetters = KafkaSink.<RowData>builder()
          .setBootstrapServers(config.bootstrapServers())
          .setKafkaProducerConfig(props)
          .setRecordSerializer(new DeadLetterSerializer(config.deadLetterTopic()))
          .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
          .build();
      rejects.sinkTo(deadLetters).name("dead-letter-sink").uid(DEAD_LETTER_UID)
          .setParallelism(REJECTS_SINK_PARALLELISM);
    }
  }

  private static BoundedIcebergSink boundedSink(JobConfig config, TableIdentifier id, TableLoader loader,
      TableLayout layout, JobConfig.TimePartitioning partitioning, String uid) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    TableBootstrap.ensureTable(catalog, id, layout, partitioning);
    closeQuietly(catalog);
    return BoundedIcebergSink.builder()
        .tableLoader(loader)
        .layout(layout)
        .closePolicy(ClosePolicy.of(config))
        .maxOpenPartitions(config.maxOpenPartitions())
        .uidPrefix(uid)
        .build();
  }

  private static <T> SingleOutputStreamOperator<T> withParallelism(SingleOutputStreamOperator<T> op, int p) {
    return p > 0 ? op.setParallelism(p) : op;
  }

  private static void closeQuietly(Catalog catalog) {
    if (catalog instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        LOG.debug("closing catalog", e);
      }
    }
  }
}
