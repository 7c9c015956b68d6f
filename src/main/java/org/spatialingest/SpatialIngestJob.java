package org.spatialingest;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.TelemetryTransform;
import org.spatialingest.sink.BoundedIcebergSink;
import org.spatialingest.sink.Catalogs;
import org.spatialingest.sink.ClosePolicy;
import org.spatialingest.sink.TableBootstrap;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.source.TelemetrySources;

/**
 * Assembles the pipeline: Kafka source → geometry transform → bounded Iceberg sink. Each stage is its own method so
 * tests (and future sources) can compose them; operator uids are stable so savepoints survive upgrades.
 */
public final class SpatialIngestJob {
  public static final String SOURCE_UID = "kafka-source";
  public static final String TRANSFORM_UID = "geometry-transform";
  public static final String SINK_UID = "spatial-sink";

  private static final Logger LOG = LoggerFactory.getLogger(SpatialIngestJob.class);

  private SpatialIngestJob() {}

  /** Applies checkpointing to the environment and builds the whole pipeline. */
  public static void build(StreamExecutionEnvironment env, JobConfig config, boolean boundedSource) {
    configureCheckpointing(env, config);
    sink(transform(source(env, config, boundedSource), config), config);
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

  public static DataStream<SourceRecord> source(StreamExecutionEnvironment env, JobConfig config, boolean bounded) {
    SingleOutputStreamOperator<SourceRecord> stream = env.fromSource(TelemetrySources.source(config, bounded),
            WatermarkStrategy.noWatermarks(), "kafka-source")
        .uid(SOURCE_UID);
    return withParallelism(stream, config.sourceParallelism());
  }

  public static DataStream<RowData> transform(DataStream<SourceRecord> records, JobConfig config) {
    SingleOutputStreamOperator<RowData> rows = records
        .process(new TelemetryTransform(HilbertCurve.CRS84))
        .returns(InternalTypeInfo.of(TelemetryTable.ROW_TYPE))
        .name("geometry-transform")
        .uid(TRANSFORM_UID);
    return withParallelism(rows, config.transformParallelism());
  }

  public static void sink(DataStream<RowData> rows, JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    TableBootstrap.ensureTable(catalog, Catalogs.tableIdentifier(config), TelemetryTable.LAYOUT,
        config.partitioning());
    closeQuietly(catalog);
    BoundedIcebergSink sink = BoundedIcebergSink.builder()
        .tableLoader(Catalogs.tableLoader(config))
        .layout(TelemetryTable.LAYOUT)
        .closePolicy(ClosePolicy.of(config))
        .maxOpenPartitions(config.maxOpenPartitions())
        .uidPrefix(SINK_UID)
        .build();
    var sinkStream = rows.sinkTo(sink).name("spatial-sink").uid(SINK_UID);
    if (config.sinkParallelism() > 0) {
      sinkStream.setParallelism(config.sinkParallelism());
    }
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
