package org.spatialingest;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.java.typeutils.EitherTypeInfo;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.types.Either;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.deadletter.DeadLetterSerializer;
import org.spatialingest.geometry.BoundedInputSample;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.RegionBootstrap;
import org.spatialingest.geometry.RegionEnrichment;
import org.spatialingest.geometry.RegionRefresh;
import org.spatialingest.geometry.TelemetryTransform;
import org.spatialingest.sink.BoundedIcebergSink;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sink.options.SnapshotExpiry;
import org.spatialingest.source.FileStartCheck;
import org.spatialingest.source.GuardedKafkaSink;
import org.spatialingest.source.KafkaAccessCheck;
import org.spatialingest.source.KafkaClients;
import org.spatialingest.source.KafkaGroupOffsets;
import org.spatialingest.source.ResumeFilter;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.source.StartCheck;
import org.spatialingest.source.StartingBacklogSource;
import org.spatialingest.source.TelemetrySources;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.CommittedRecords;
import org.spatialingest.table.PositionsListener;
import org.spatialingest.table.RejectsTable;
import org.spatialingest.table.ResumeTags;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TableMaintenanceTasks;
import org.spatialingest.table.TelemetryTable;

/**
 * Assembles the pipeline: source (Kafka, or a bounded file source) → resume filter → geometry
 * transform (+ region enrichment) → one bounded Iceberg sink for the rows and the transform's
 * rejects (into {@code <table>_rejects}). Each stage is its own method so tests (and future
 * sources) can compose them; operator uids are stable so savepoints survive upgrades.
 */
public final class SpatialIngestJob {
  public static final String SOURCE_UID = "kafka-source";
  public static final String FILE_SOURCE_UID = "file-source";
  public static final String TRANSFORM_UID = "geometry-transform";
  public static final String REGIONS_UID = "region-enrichment";
  public static final String SINK_UID = "spatial-sink";
  public static final String RESUME_FILTER_UID = "resume-filter";
  public static final String DEAD_LETTER_UID = "dead-letter-sink";

  /** Rejects are normally rare: one Kafka producer is enough for the dead-letter topic. */
  public static final int DEAD_LETTER_PARALLELISM = 1;

  private static final Logger LOG = LoggerFactory.getLogger(SpatialIngestJob.class);

  private SpatialIngestJob() {}

  /**
   * The transform's two outputs: table rows (after region enrichment, if on) and rejects-table
   * rows.
   */
  public record Transformed(DataStream<RowData> rows, DataStream<RowData> rejects) {}

  /**
   * Checks that Kafka accepts the job's credentials and ACLs ({@link KafkaAccessCheck}), applies
   * checkpointing to the environment and builds the whole pipeline; the Flink UI shows the job's
   * configuration, credentials masked, as its global job parameters.
   */
  public static JobStart build(
      StreamExecutionEnvironment env, JobConfig config, boolean boundedSource) {
    if (!config.input().fileSource()) {
      KafkaAccessCheck.verify(config);
    }
    env.getConfig().setGlobalJobParameters(Configuration.fromMap(config.redactedMap()));
    configureCheckpointing(env, config);
    reuseObjectsUnlessConfigured(env);
    JobStart start = decideStart(env, config);
    sink(transformWithRejects(source(env, config, boundedSource, start), config), config, start);
    maintenance(env, config, boundedSource);
    return start;
  }

  /**
   * With {@code maintenance.enabled}, Iceberg's table maintenance for both tables ({@link
   * TableMaintenanceTasks}), in this job, instead of the sink's own expiry; none for a bounded run
   * (its monitor sources never end).
   */
  public static void maintenance(
      StreamExecutionEnvironment env, JobConfig config, boolean boundedSource) {
    if (!config.maintenance().enabled()) {
      return;
    }
    if (boundedSource || config.input().fileSource()) {
      LOG.info("maintenance.enabled is ignored for a bounded run");
      return;
    }
    TableMaintenanceTasks.attach(env, config);
  }

  /**
   * Flink's object reuse ({@code pipeline.object-reuse}), unless the Flink configuration sets it
   * either way: chained operators then hand each record on instead of deep-copying it (the source
   * record through its POJO serializer's reflection, the row field by field). Safe here because no
   * operator of this job changes or keeps a record it was given: the source and the transform make
   * a new object per record, region enrichment copies the row it extends, and the sink serializes
   * each row into its buffer at once.
   */
  public static void reuseObjectsUnlessConfigured(StreamExecutionEnvironment env) {
    if (env.getConfiguration().getOptional(PipelineOptions.OBJECT_REUSE).isEmpty()) {
      env.getConfig().enableObjectReuse();
    }
  }

  /**
   * Checkpoints every {@code checkpoint.interval}, exactly once (the sink's builder turns unaligned
   * checkpoints off), and the sink's bounds in the log.
   */
  public static void configureCheckpointing(StreamExecutionEnvironment env, JobConfig config) {
    env.enableCheckpointing(config.checkpointInterval().toMillis(), CheckpointingMode.EXACTLY_ONCE);
    if (env.getConfiguration()
        .getOptional(CheckpointingOptions.CHECKPOINTING_INTERVAL_DURING_BACKLOG)
        .isEmpty()) {
      // no trigger while the sources report their start as backlog (StartingBacklogSource): each
      // would be refused, tasks not running yet, and counted as a failed checkpoint
      env.getCheckpointConfig().setCheckpointIntervalDuringBacklog(0);
    }
    var bounds = config.sizingBounds();
    LOG.info(
        "Sink bounds: memory budget M={} bytes per writer, target file T={} bytes, max latency L={}, "
            + "checkpoint interval C={}, close policy {}",
        bounds.memoryBytes(),
        bounds.targetFileBytes(),
        bounds.maxLatency(),
        bounds.checkpointInterval(),
        config.closePolicy());
    if (bounds.latencyShorterThanCheckpoint()) {
      LOG.warn(
          "sink.max-latency ({}) is shorter than checkpoint.interval ({}): every checkpoint will close every "
              + "file, and rows wait up to one checkpoint interval anyway",
          bounds.maxLatency(),
          bounds.checkpointInterval());
    }
  }

  /**
   * The configured source: Kafka ({@code bounded}: stop at the offsets latest at start) or {@code
   * file:<path>} (always bounded); with {@code source.skip-committed}, followed by the {@link
   * ResumeFilter} that skips, on a start without state, what the tables already hold (without it, a
   * Kafka source still gets the filter's restore check of the topic ids).
   */
  public static DataStream<SourceRecord> source(
      StreamExecutionEnvironment env, JobConfig config, boolean bounded, JobStart start) {
    SingleOutputStreamOperator<SourceRecord> stream;
    if (config.input().fileSource()) {
      stream =
          env.fromSource(
                  StartingBacklogSource.of(
                      TelemetrySources.admitted(
                          TelemetrySources.checkpointShares(
                              TelemetrySources.file(
                                  config.input().filePath(),
                                  start.positions().files(),
                                  start.committedWhole()),
                              config),
                          config)),
                  WatermarkStrategy.noWatermarks(),
                  "file-source")
              .uid(FILE_SOURCE_UID);
    } else {
      stream =
          env.fromSource(
                  StartingBacklogSource.of(
                      TelemetrySources.source(config, bounded, start.positions())),
                  WatermarkStrategy.noWatermarks(),
                  "kafka-source")
              .uid(SOURCE_UID);
    }
    stream = withParallelism(stream, config.sourceParallelism());
    if (!config.skipCommitted() && config.input().fileSource()) {
      return stream;
    }
    ensureTables(config);
    ResumeFilter filter =
        config.skipCommitted()
            ? new ResumeFilter(
                Catalogs.tableLoader(config),
                Catalogs.rejectsTableLoader(config),
                config.sinkId(),
                start.positions().ids(),
                ResumeFilter.aliasesOf(start.positions().files()),
                start.resumeAt(),
                start.committed())
            : ResumeFilter.sourceIdsOnly(start.positions().ids());
    SingleOutputStreamOperator<SourceRecord> resumed =
        stream
            .process(filter)
            .returns(SourceRecord.class)
            .name("resume-filter")
            .uid(RESUME_FILTER_UID);
    return withParallelism(resumed, config.sourceParallelism());
  }

  /**
   * Table rows only (rejects are counted, not written); the whole job uses {@link
   * #transformWithRejects}.
   */
  public static DataStream<RowData> transform(DataStream<SourceRecord> records, JobConfig config) {
    return transformWithRejects(records, config).rows();
  }

  /**
   * The transform operator (its own parallelism, {@code parallelism.transform}) with the rejects
   * side output and, when {@code regions.refresh-kind} is set, the region enrichment operator (same
   * parallelism) fed by the transform's boundary refreshes through broadcast state.
   */
  public static Transformed transformWithRejects(
      DataStream<SourceRecord> records, JobConfig config) {
    TableLayout layout = TelemetryTable.layout(config);
    SingleOutputStreamOperator<RowData> rows =
        records
            .process(new TelemetryTransform(HilbertCurve.CRS84, config))
            .returns(InternalTypeInfo.of(layout.rowType()))
            .name("geometry-transform")
            .uid(TRANSFORM_UID);
    rows = withParallelism(rows, config.transformParallelism());
    DataStream<RowData> rejects = rows.getSideOutput(TelemetryTransform.REJECTS);
    if (!config.regions().enabled()) {
      return new Transformed(rows, rejects);
    }
    BroadcastStream<RegionRefresh> refreshes =
        rows.getSideOutput(TelemetryTransform.REFRESHES).broadcast(RegionEnrichment.REGIONS);
    SingleOutputStreamOperator<RowData> enriched =
        rows.connect(refreshes)
            .process(new RegionEnrichment(layout.rowType(), RegionBootstrap.load(config)))
            .returns(InternalTypeInfo.of(layout.rowType()))
            .name("region-enrichment")
            .uid(REGIONS_UID);
    return new Transformed(withParallelism(enriched, config.transformParallelism()), rejects);
  }

  /**
   * Rows and rejects into one bounded sink that commits the telemetry table and {@code
   * <table>_rejects} together (so the positions it records cover every record, whichever table it
   * went to), publishing the positions as the consumer group's offsets; with {@code
   * rejects.dead-letter-topic} the rejects also go to that Kafka topic (at-least-once).
   */
  public static void sink(Transformed t, JobConfig config, JobStart start) {
    TableLayout layout = TelemetryTable.layout(config);
    EitherTypeInfo<RowData, RowData> type =
        new EitherTypeInfo<>(
            InternalTypeInfo.of(layout.rowType()), InternalTypeInfo.of(RejectsTable.ROW_TYPE));
    DataStream<Either<RowData, RowData>> rows =
        t.rows()
            .map(row -> Either.<RowData, RowData>Left(row))
            .returns(type)
            .name("rows")
            .uid(SINK_UID + "-rows");
    DataStream<Either<RowData, RowData>> rejects =
        t.rejects()
            .map(row -> Either.<RowData, RowData>Right(row))
            .returns(type)
            .name("rejects")
            .uid(SINK_UID + "-rejects");
    write(
        List.of(rows, rejects),
        TableRouter.either(),
        List.of(
            new SinkTarget(Catalogs.tableLoader(config), layout, true),
            new SinkTarget(Catalogs.rejectsTableLoader(config), RejectsTable.LAYOUT, false)),
        config,
        start.positions(),
        start.committedWhole());
    if (!config.deadLetterTopic().isEmpty()) {
      KafkaSink<RowData> deadLetters =
          KafkaSink.<RowData>builder()
              .setBootstrapServers(config.bootstrapServers())
              .setKafkaProducerConfig(KafkaClients.properties(config))
              .setRecordSerializer(new DeadLetterSerializer(config.deadLetterTopic()))
              .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
              .build();
      t.rejects()
          .sinkTo(GuardedKafkaSink.of(deadLetters)) // access failures bounded as the source's
          .name("dead-letter-sink")
          .uid(DEAD_LETTER_UID)
          .setParallelism(DEAD_LETTER_PARALLELISM);
    }
  }

  /** Table rows only into the telemetry table (tests and benchmarks that have no rejects). */
  public static void sink(DataStream<RowData> rows, JobConfig config) {
    write(
        List.of(rows),
        TableRouter.single(),
        List.of(new SinkTarget(Catalogs.tableLoader(config), TelemetryTable.layout(config), true)),
        config,
        StartPositions.none(config.sinkId()),
        Set.of());
  }

  /**
   * One table of the sink; {@code ranged}: the distribution may split its partitions by Hilbert-key
   * range.
   */
  private record SinkTarget(TableLoader loader, TableLayout layout, boolean ranged) {}

  /**
   * The sink over {@code tables} (the first is the primary one), put into the job by its builder
   * like any user's: behind the {@code sink.distribution} exchange unless it is {@code none}.
   */
  private static <T> void write(
      List<DataStream<T>> inputs,
      TableRouter<T> router,
      List<SinkTarget> tables,
      JobConfig config,
      StartPositions start,
      Set<String> committedWhole) {
    ensureTables(config);
    BoundedIcebergSink.Builder<T> sink =
        BoundedIcebergSink.forRows(router)
            .distribution(config.distribution())
            .writers(config.sinkParallelism())
            .startPositions(start)
            .closePolicy(config.closePolicy(), config.sizingBounds())
            .maxOpenPartitions(config.maxOpenPartitions())
            .maxParkedPartitions(config.maxParkedPartitions())
            .rowGroupsPerFile(config.rowGroupsPerFile())
            .uidPrefix(SINK_UID)
            .sinkId(config.sinkId(), config.sinkIdIsDefault())
            .positionsListener(
                config.input().fileSource()
                    ? PositionsListener.none()
                    : new KafkaGroupOffsets(
                        KafkaClients.connection(config), config.groupId(), config.topic()));
    SnapshotExpiry expiry = config.maintenance().sinkExpiry();
    if (expiry == null) {
      sink.noSnapshotExpiry();
    } else {
      sink.snapshotExpiry(expiry);
    }
    tables.forEach(target -> sink.table(target.loader(), target.layout(), target.ranged()));
    if (config.input().fileSource() && config.distribution() == DistributionMode.RANGE) {
      // a bounded input: key ranges from a sample of all this run reads of it from the first row
      BoundedInputSample.read(config, committedWhole)
          .ifPresent(s -> sink.startingSample(s.rows(), s.rowsPerSampledRow()));
    }
    sink.append(inputs);
  }

  /**
   * What the job starts from, decided once, before the job graph is built, and passed to the
   * source, the resume filter and the sink ({@link JobStart}): the table's positions of this {@code
   * sink.id} that apply to the Kafka cluster and topic it reads now ({@link StartCheck#decide});
   * refused ({@link org.spatialingest.table.PositionsRefusedException}) when they cannot apply. A
   * file source has no positions: its start is {@link FileStartCheck}'s (which prefix of each input
   * file this run reads, and which files moved or changed). A start without state that skips what
   * the tables hold also tags the snapshots the skip is fixed at ({@link ResumeTags}); for a file
   * source it reads what they hold there once ({@link CommittedRecords}): the files committed whole
   * are not read at all ({@link FileStartCheck#committedWhole}), and the resume filter gets the
   * committed lines of the others.
   */
  public static JobStart decideStart(StreamExecutionEnvironment env, JobConfig config) {
    ensureTables(config);
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    try {
      boolean restore =
          env.getConfiguration().getOptional(StateRecoveryOptions.SAVEPOINT_PATH).isPresent();
      Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
      FileStartCheck.Start files =
          config.input().fileSource()
              ? FileStartCheck.decide(config, table, config.skipCommitted())
              : null;
      StartPositions positions =
          files != null ? files.positions() : StartCheck.decide(config, table, restore);
      if (restore || !config.skipCommitted()) {
        return new JobStart(positions, -1, -1);
      }
      Table rejects = catalog.loadTable(Catalogs.rejectsTableIdentifier(config));
      long resumeAt = ResumeTags.pin(table, config.sinkId());
      long rejectsResumeAt = ResumeTags.pin(rejects, config.sinkId());
      if (files == null || resumeAt < 0 && rejectsResumeAt < 0) {
        return new JobStart(positions, resumeAt, rejectsResumeAt);
      }
      CommittedRecords committed =
          CommittedRecords.read(
              table, resumeAt, rejects, rejectsResumeAt, config.sinkId(), positions.ids());
      Set<String> whole = FileStartCheck.committedWhole(files, committed);
      Set<String> read = new HashSet<>();
      positions
          .files()
          .files()
          .values()
          .forEach(
              f -> {
                if (!whole.contains(f.path())) {
                  read.add(SourceKeys.file(f.path()));
                  read.addAll(f.aliases());
                }
              });
      if (!whole.isEmpty()) {
        LOG.info(
            "{} of {} input files are committed whole (every line this run would read of them is in the "
                + "tables): not read",
            whole.size(),
            positions.files().files().size());
      }
      return new JobStart(positions, resumeAt, rejectsResumeAt, whole, committed.onlyFiles(read));
    } finally {
      closeQuietly(catalog);
    }
  }

  /**
   * Creates the telemetry and rejects tables if missing (and adds columns earlier builds lacked).
   */
  public static void ensureTables(JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    try {
      TableBootstrap.ensureTable(
          catalog,
          Catalogs.tableIdentifier(config),
          TelemetryTable.layout(config),
          config.partitioning());
      TableBootstrap.ensureTable(
          catalog,
          Catalogs.rejectsTableIdentifier(config),
          RejectsTable.LAYOUT,
          JobConfig.TimePartitioning.DAY);
    } finally {
      closeQuietly(catalog);
    }
  }

  private static <T> SingleOutputStreamOperator<T> withParallelism(
      SingleOutputStreamOperator<T> op, int p) {
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
