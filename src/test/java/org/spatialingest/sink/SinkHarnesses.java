package org.spatialingest.sink;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.operators.sink.CommitterOperatorFactory;
import org.apache.flink.streaming.runtime.operators.sink.SinkWriterOperatorFactory;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.types.Either;
import org.apache.iceberg.Table;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.commit.FileBatch;
import org.spatialingest.sink.commit.FileBatchAggregator;
import org.spatialingest.sink.commit.FileBatchSerializer;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.core.WriterReportSerializer;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.RejectsTable;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TelemetryTable;
import org.spatialingest.tools.SinkWrittenTables;

/**
 * The sink's operators in Flink's operator test harnesses, as the job wires them, against a real
 * Hadoop catalog with the job's two tables (no broker, no MiniCluster): the writer ({@code
 * SinkWriterOperator} running {@code BufferingWriter}), the aggregator and the committer ({@code
 * CommitterOperator} running {@code IcebergBatchCommitter}). Messages between them go through the
 * job's own serializers, as over the network. Opening a harness costs milliseconds; a test drives
 * barriers, snapshots, completions and restores by hand.
 */
public final class SinkHarnesses {
  /** The sink of {@code builder} without its exchange, for operator harnesses in other packages. */
  public static <T> BoundedIcebergSink<T> sinkOf(BoundedIcebergSink.Builder<T> builder) {
    return builder.build();
  }

  public static final String TOPIC = "telemetry";
  static final String UID = "spatial-sink";

  private final JobConfig config;
  private final Path dir;
  private final SinkTables tables;
  private final BoundedIcebergSink<Either<RowData, RowData>> sink;

  /**
   * The job's tables in {@code dir} (created as the job creates them) and a sink over them built as
   * {@code SpatialIngestJob} builds it with {@code sink.distribution: none}.
   *
   * @param settings job keys ({@code sink.target-file-size}, {@code sink.max-latency}, ...)
   */
  public SinkHarnesses(Path dir, Map<String, String> settings) {
    this.dir = dir;
    Map<String, String> keys = new HashMap<>(settings);
    keys.putIfAbsent("sink.distribution", "none");
    this.config = TestKit.config("localhost:1", TOPIC, dir.resolve("warehouse"), keys);
    SpatialIngestJob.ensureTables(config);
    this.tables =
        SinkTables.of(
            List.of(
                new SinkTable(Catalogs.tableLoader(config), TelemetryTable.layout(config)),
                new SinkTable(Catalogs.rejectsTableLoader(config), RejectsTable.LAYOUT)));
    this.sink = sink(TableRouter.either());
  }

  /** The sink over the tables, built as the job builds it, for input that {@code router} reads. */
  private <T> BoundedIcebergSink<T> sink(TableRouter<T> router) {
    return BoundedIcebergSink.forRows(router)
        .table(tables.get(0).loader(), tables.get(0).layout())
        .table(tables.get(1).loader(), tables.get(1).layout())
        .closePolicy(config.closePolicy(), config.sizingBounds())
        .maxOpenPartitions(config.maxOpenPartitions())
        .maxParkedPartitions(config.maxParkedPartitions())
        .rowGroupsPerFile(config.rowGroupsPerFile())
        .uidPrefix(UID)
        .sinkId(config.sinkId(), config.sinkIdIsDefault())
        .build();
  }

  public JobConfig config() {
    return config;
  }

  public SinkScope scope() {
    return new SinkScope(UID, config.sinkId(), config.sinkIdIsDefault());
  }

  /** The telemetry table, fresh. */
  public Table table() {
    return TestKit.table(config);
  }

  /** The rejects table, fresh. */
  public Table rejectsTable() {
    return Catalogs.catalogLoader(config)
        .loadCatalog()
        .loadTable(Catalogs.rejectsTableIdentifier(config));
  }

  /** The closed files of a batch the aggregator emitted (read from where it stored them). */
  public List<org.spatialingest.sink.core.ClosedFile> files(FileBatch batch) {
    return batch.closed(table().io()).files();
  }

  /** The rows of {@code table} (0: telemetry, 1: rejects) in a batch the aggregator emitted. */
  public long rowCount(FileBatch batch, int table) {
    return files(batch).stream()
        .filter(f -> f.table() == table)
        .mapToLong(f -> f.file().recordCount())
        .sum();
  }

  /** The stored batches on disk (the aggregator's {@code .batch} files), sorted. */
  public List<Path> storedBatches() throws java.io.IOException {
    return filesUnderStaging(List.of(table()), ".batch");
  }

  /** A location of the Hadoop catalog in the temporary directory, as a local path. */
  public static Path local(String location) {
    return location.contains(":") ? Path.of(java.net.URI.create(location)) : Path.of(location);
  }

  /**
   * The staging runs on disk, of both tables, sorted (not the lease, nor Hadoop's checksum files).
   */
  public List<Path> stagingRuns() throws java.io.IOException {
    return filesUnderStaging(List.of(table(), rejectsTable()), ".rows");
  }

  /** The files named {@code *<suffix>} under the tables' {@code _staging} directories, sorted. */
  private static List<Path> filesUnderStaging(List<Table> tables, String suffix)
      throws java.io.IOException {
    List<Path> found = new ArrayList<>();
    for (Table t : tables) {
      Path staging = local(t.location()).resolve("_staging");
      if (java.nio.file.Files.exists(staging)) {
        try (var files = java.nio.file.Files.walk(staging)) {
          files
              .filter(java.nio.file.Files::isRegularFile)
              .filter(f -> f.getFileName().toString().endsWith(suffix))
              .forEach(found::add);
        }
      }
    }
    found.sort(null);
    return found;
  }

  /** A writer subtask (not yet opened: restore with {@code initializeState} first if needed). */
  public OneInputStreamOperatorTestHarness<
          Either<RowData, RowData>, CommittableMessage<WriterReport>>
      writer(int subtask, int parallelism) throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<
            Either<RowData, RowData>, CommittableMessage<WriterReport>>(
            new SinkWriterOperatorFactory<>(sink), parallelism, parallelism, subtask);
    harness.setup(
        CommittableMessageTypeInfo.of(WriterReportSerializer::new)
            .createSerializer(new SerializerConfigImpl()));
    return withStorage(harness);
  }

  /**
   * A writer subtask (parallelism 1, not yet opened) that takes {@link RowBatch}es, as the job's
   * writers do behind a distribution step ({@code sink.distribution: range}): each batch holds rows
   * of one writer buffer ({@link #batch}).
   */
  public OneInputStreamOperatorTestHarness<RowBatch, CommittableMessage<WriterReport>> batchWriter()
      throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<RowBatch, CommittableMessage<WriterReport>>(
            new SinkWriterOperatorFactory<>(sink(TableRouter.batched())), 1, 1, 0);
    harness.setup(
        CommittableMessageTypeInfo.of(WriterReportSerializer::new)
            .createSerializer(new SerializerConfigImpl()));
    return withStorage(harness);
  }

  /**
   * Telemetry rows ({@code Left}s) as one batch for writer buffer {@code bufferId}, serialized as a
   * distribution step sends them.
   */
  public RowBatch batch(List<Either<RowData, RowData>> rows, int bufferId) throws IOException {
    RowDataSerializer serializer = new RowDataSerializer(tables.get(0).layout().rowType());
    DataOutputSerializer out = new DataOutputSerializer(1024);
    for (Either<RowData, RowData> row : rows) {
      serializer.serialize(row.left(), out);
    }
    return new RowBatch(
        0, SinkTables.PRIMARY, RowBatch.NOT_GROUPED, bufferId, out.getCopyOfBuffer());
  }

  /**
   * The state of one operator subtask (parallelism 1) that holds only the operator list state
   * {@code name} of byte arrays with {@code values}: a state as another build wrote it, for a
   * harness to restore from ({@code initializeState}).
   */
  public static OperatorSubtaskState listState(String name, List<byte[]> values) throws Exception {
    try (var holder =
        new OneInputStreamOperatorTestHarness<Void, Void>(new ListHolder(name, values))) {
      holder.open();
      return holder.snapshot(1, 1);
    }
  }

  /** Holds one list state of byte arrays; nothing else. */
  private static final class ListHolder extends AbstractStreamOperator<Void>
      implements OneInputStreamOperator<Void, Void> {
    private final String name;
    private final List<byte[]> values;

    ListHolder(String name, List<byte[]> values) {
      this.name = name;
      this.values = values;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
      super.initializeState(context);
      context
          .getOperatorStateStore()
          .getListState(new ListStateDescriptor<>(name, BytePrimitiveArraySerializer.INSTANCE))
          .update(values);
    }

    @Override
    public void processElement(StreamRecord<Void> element) {}
  }

  /**
   * A writer (subtask 0 of 1), the aggregator and the committer of one job, as most commit-path
   * tests start them: without state, opened in that order, closed in the reverse order.
   */
  public Chain openChain() throws Exception {
    Chain chain = new Chain(writer(0, 1), aggregator(), committer());
    try {
      chain.writer().open();
      chain.aggregator().open();
      chain.committer().open();
    } catch (Exception e) {
      try {
        chain.close();
      } catch (Exception c) {
        e.addSuppressed(c);
      }
      throw e;
    }
    return chain;
  }

  /** See {@link #openChain}. */
  public record Chain(
      OneInputStreamOperatorTestHarness<Either<RowData, RowData>, CommittableMessage<WriterReport>>
          writer,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
          aggregator,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
          committer)
      implements AutoCloseable {
    @Override
    public void close() throws Exception {
      try (writer;
          aggregator;
          committer) {
        // closed as try-with-resources closes: committer, aggregator, writer
      }
    }
  }

  /** The aggregator (parallelism 1), not yet opened. */
  public OneInputStreamOperatorTestHarness<
          CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
      aggregator() throws Exception {
    return aggregator(new JobID());
  }

  /** The aggregator of a job with id {@code job}, not yet opened. */
  public OneInputStreamOperatorTestHarness<
          CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
      aggregator(JobID job) throws Exception {
    return aggregator(job, new org.apache.flink.configuration.Configuration());
  }

  /** The aggregator of a job with id {@code job} on a TaskManager configured by {@code flink}. */
  public OneInputStreamOperatorTestHarness<
          CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
      aggregator(JobID job, org.apache.flink.configuration.Configuration flink) throws Exception {
    MockEnvironment environment = environment(job, flink);
    var harness =
        new OneInputStreamOperatorTestHarness<
            CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>(
            new FileBatchAggregator(
                tables, scope(), config.sizingBounds().checkpointInterval(), null),
            environment) {
          @Override
          public void close() throws Exception {
            try {
              super.close();
            } finally {
              environment.close(); // the harness closes only an environment it made
            }
          }
        };
    harness.setup(batchSerializer());
    return withStorage(harness);
  }

  /** The committer (as the job runs it: its first subtask gets every batch), not yet opened. */
  public OneInputStreamOperatorTestHarness<
          CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
      committer() throws Exception {
    return committer(new JobID());
  }

  /** The committer of a job with id {@code job}, not yet opened. */
  public OneInputStreamOperatorTestHarness<
          CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
      committer(JobID job) throws Exception {
    MockEnvironment environment = environment(job);
    var harness =
        new OneInputStreamOperatorTestHarness<
            CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>(
            new CommitterOperatorFactory<>(sink, false, true), environment) {
          @Override
          public void close() throws Exception {
            try {
              super.close();
            } finally {
              environment.close(); // the harness closes only an environment it made
            }
          }
        };
    harness.setup(batchSerializer());
    return withStorage(harness);
  }

  private static org.apache.flink.api.common.typeutils.TypeSerializer<CommittableMessage<FileBatch>>
      batchSerializer() {
    return CommittableMessageTypeInfo.of(FileBatchSerializer::new)
        .createSerializer(new SerializerConfigImpl());
  }

  /** A single subtask's environment, as the harness makes it, of the job {@code job}. */
  private static MockEnvironment environment(JobID job) {
    return environment(job, new org.apache.flink.configuration.Configuration());
  }

  private static MockEnvironment environment(
      JobID job, org.apache.flink.configuration.Configuration flink) {
    return MockEnvironment.builder()
        .setTaskManagerRuntimeInfo(
            new org.apache.flink.runtime.util.TestingTaskManagerRuntimeInfo(flink))
        .setTaskName("MockTask")
        .setManagedMemorySize(3 * 1024 * 1024)
        .setBufferSize(1024)
        .setMaxParallelism(1)
        .setParallelism(1)
        .setSubtaskIndex(0)
        .setJobID(job)
        .build();
  }

  /** Checkpoints to a directory, as the job's do (JobManager memory refuses large states). */
  private <H extends AbstractStreamOperatorTestHarness<?>> H withStorage(H harness) {
    harness.setCheckpointStorage(
        new FileSystemCheckpointStorage(dir.resolve("checkpoints").toUri()));
    return harness;
  }

  /** Noon of the day most test rows' event times fall on (the table is partitioned by day). */
  public static final long DAY_1 = java.time.Instant.parse("2026-12-01T12:00:00Z").toEpochMilli();

  /**
   * {@code n} generated point rows of Kafka partition {@code partition} at offsets {@code
   * firstOffset...}, event times from {@code eventMillis} and ingest times from {@code
   * ingestMillis} (one millisecond apart each).
   */
  public static List<Either<RowData, RowData>> rows(
      long seed, int n, int partition, long firstOffset, long eventMillis, long ingestMillis)
      throws Exception {
    return rows(
        seed, n, partition, firstOffset, eventMillis, ingestMillis, TelemetryGenerator.Area.EUROPE);
  }

  /** As {@link #rows(long, int, int, long, long, long)}, the vehicles starting in {@code area}. */
  public static List<Either<RowData, RowData>> rows(
      long seed,
      int n,
      int partition,
      long firstOffset,
      long eventMillis,
      long ingestMillis,
      TelemetryGenerator.Area area)
      throws Exception {
    return rows(
        new TelemetryGenerator(seed, 50, 0, 0, area),
        n,
        partition,
        firstOffset,
        eventMillis,
        ingestMillis);
  }

  /** As {@link #rows(long, int, int, long, long, long)}, the records {@code generator} makes. */
  public static List<Either<RowData, RowData>> rows(
      TelemetryGenerator generator,
      int n,
      int partition,
      long firstOffset,
      long eventMillis,
      long ingestMillis)
      throws Exception {
    List<Either<RowData, RowData>> rows = new ArrayList<>(n);
    for (GenericRowData row : SinkWrittenTables.rows(generator, n, eventMillis, 1)) {
      int i = rows.size();
      // ids name the source position: unique across calls
      row.setField(TelemetryTable.ID, StringData.fromString(partition + "-" + (firstOffset + i)));
      row.setField(TelemetryTable.INGEST_TIME, TimestampData.fromEpochMillis(ingestMillis + i));
      row.setField(TelemetryTable.SOURCE, StringData.fromString(key(partition)));
      row.setField(TelemetryTable.SOURCE_OFFSET, firstOffset + i);
      rows.add(Either.Left(row));
    }
    return rows;
  }

  /** Each row into {@code writer}, in order. */
  public static void feed(
      OneInputStreamOperatorTestHarness<Either<RowData, RowData>, ?> writer,
      List<Either<RowData, RowData>> rows)
      throws Exception {
    for (Either<RowData, RowData> row : rows) {
      writer.processElement(new StreamRecord<>(row));
    }
  }

  /** A rejects-table row of Kafka partition {@code partition} at {@code offset}. */
  public static Either<RowData, RowData> reject(int partition, long offset, long ingestMillis) {
    GenericRowData row = new GenericRowData(RejectsTable.FIELD_COUNT);
    byte[] raw = "not json".getBytes();
    row.setField(RejectsTable.RAW, raw);
    row.setField(RejectsTable.RAW_SIZE, (long) raw.length);
    row.setField(RejectsTable.REASON, StringData.fromString("malformed_json"));
    row.setField(RejectsTable.MESSAGE, StringData.fromString("test reject"));
    row.setField(RejectsTable.TOPIC, StringData.fromString(TOPIC));
    row.setField(RejectsTable.PARTITION, partition);
    row.setField(RejectsTable.OFFSET, offset);
    row.setField(RejectsTable.INGEST_TIME, TimestampData.fromEpochMillis(ingestMillis));
    row.setField(RejectsTable.REJECTED_AT, TimestampData.fromEpochMillis(ingestMillis));
    return Either.Right(row);
  }

  /** Kafka partition {@code partition}'s source key. */
  public static String key(int partition) {
    return SourceKeys.kafka(TOPIC, partition);
  }

  /** The committables a harness emitted since the last call (its output is cleared). */
  public static <C> List<C> drain(AbstractStreamOperatorTestHarness<CommittableMessage<C>> h) {
    List<C> out = new ArrayList<>();
    for (Object o : h.getOutput()) {
      if (o instanceof org.apache.flink.streaming.runtime.streamrecord.StreamRecord<?> r
          && r.getValue() instanceof CommittableWithLineage<?> c) {
        @SuppressWarnings("unchecked")
        C committable = (C) c.getCommittable();
        out.add(committable);
      }
    }
    h.getOutput().clear();
    return out;
  }

  /**
   * One checkpoint {@code id} through writer, aggregator and committer, as the job runs it: {@code
   * rows} written, the barrier's reports and batch passed on, the committer's checkpoint taken and
   * completed (so the batch is committed).
   */
  public static void commitThrough(
      OneInputStreamOperatorTestHarness<Either<RowData, RowData>, CommittableMessage<WriterReport>>
          writer,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
          aggregator,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
          committer,
      List<Either<RowData, RowData>> rows,
      long id)
      throws Exception {
    barrier(writer, aggregator, committer, rows, id);
    committer.snapshot(id, id);
    committer.notifyOfCompletedCheckpoint(id);
  }

  /**
   * Checkpoint {@code id}'s barrier through writer and aggregator, as the job runs it: {@code rows}
   * written, the writer's reports passed to the aggregator, its batch to the committer; no
   * checkpoint taken.
   */
  public static void barrier(
      OneInputStreamOperatorTestHarness<Either<RowData, RowData>, CommittableMessage<WriterReport>>
          writer,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
          aggregator,
      OneInputStreamOperatorTestHarness<
              CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
          committer,
      List<Either<RowData, RowData>> rows,
      long id)
      throws Exception {
    for (Either<RowData, RowData> row : rows) {
      writer.processElement(
          new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>(row));
    }
    writer.prepareSnapshotPreBarrier(id);
    forward(writer, aggregator);
    aggregator.prepareSnapshotPreBarrier(id);
    forward(aggregator, committer);
  }

  /**
   * A checkpoint {@code id} of writer and aggregator that completes: barrier, snapshots, then the
   * completion (the aggregator's clean-up runs); the aggregator's batch stays in its output.
   */
  public static void checkpoint(
      OneInputStreamOperatorTestHarness<Either<RowData, RowData>, CommittableMessage<WriterReport>>
          writer,
      OneInputStreamOperatorTestHarness<CommittableMessage<WriterReport>, ?> aggregator,
      long id)
      throws Exception {
    writer.prepareSnapshotPreBarrier(id);
    writer.snapshot(id, id);
    forward(writer, aggregator);
    aggregator.prepareSnapshotPreBarrier(id);
    aggregator.snapshot(id, id);
    aggregator.notifyOfCompletedCheckpoint(id);
  }

  /**
   * Feeds every committable message {@code from} emitted since the last call to {@code to} (as the
   * job's exchange would), and clears {@code from}'s output.
   */
  public static <C> void forward(
      AbstractStreamOperatorTestHarness<CommittableMessage<C>> from,
      OneInputStreamOperatorTestHarness<CommittableMessage<C>, ?> to)
      throws Exception {
    for (CommittableMessage<C> m : drainMessages(from)) {
      to.processElement(new org.apache.flink.streaming.runtime.streamrecord.StreamRecord<>(m));
    }
  }

  /** Every committable message a harness emitted since the last call (its output is cleared). */
  public static <C> List<CommittableMessage<C>> drainMessages(
      AbstractStreamOperatorTestHarness<CommittableMessage<C>> h) {
    List<CommittableMessage<C>> out = new ArrayList<>();
    for (Object o : h.getOutput()) {
      if (o instanceof org.apache.flink.streaming.runtime.streamrecord.StreamRecord<?> r) {
        @SuppressWarnings("unchecked")
        CommittableMessage<C> m = (CommittableMessage<C>) r.getValue();
        out.add(m);
      }
    }
    h.getOutput().clear();
    return out;
  }
}
