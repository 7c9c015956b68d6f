package org.spatialingest.sink;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.commit.FileBatch;
import org.spatialingest.sink.commit.FileBatchAggregator;
import org.spatialingest.sink.commit.FileBatchSerializer;
import org.spatialingest.sink.commit.IcebergBatchCommitter;
import org.spatialingest.sink.compat.TableSpecs;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.core.WriterReportSerializer;
import org.spatialingest.sink.distribution.Distribution;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sink.options.SinkOptions;
import org.spatialingest.sink.options.SnapshotExpiry;
import org.spatialingest.sink.write.BufferingWriter;
import org.spatialingest.sink.write.ClosePolicy;
import org.spatialingest.sink.write.SinkFiles;
import org.spatialingest.sink.write.WriterState;
import org.spatialingest.sink.write.WriterStateSerializer;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.PositionsListener;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TableLayout;

/**
 * The byte-and-time bounded, checkpoint-aligned Iceberg sink, for one table or several committed
 * together (the telemetry table and its rejects table).
 *
 * <p>Data path: {@link BufferingWriter} (parallel; buffers rows per table and partition, stages new
 * rows at each barrier, closes files when the {@link ClosePolicy} says so) → {@link
 * FileBatchAggregator} (parallelism 1; one batch per checkpoint, with source positions) → {@link
 * IcebergBatchCommitter} (after the checkpoint completes: one snapshot per table, the primary table
 * last, with the positions). In front of the writers, unless {@code none}, the distribution's
 * exchange ({@link Distribution}). Build it with {@link #forRows(TableRouter)}.
 *
 * @param <T> input elements; a {@link TableRouter} maps each to a table and a row
 */
@PublicEvolving
public final class BoundedIcebergSink<T>
    implements Sink<T>,
        SupportsWriterState<T, WriterState>,
        SupportsCommitter<FileBatch>,
        SupportsPreCommitTopology<WriterReport, FileBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(BoundedIcebergSink.class);
  private final SinkTables tables;
  private final TableRouter<T> router;
  private final ClosePolicy policy;
  private final long rowGroupBytes;
  private final String uidPrefix;
  private final SinkScope scope;
  private final Duration checkpointInterval;
  private final PositionsListener listener;
  private final StartPositions start;
  private final SnapshotExpiry expiry;

  private BoundedIcebergSink(Builder<?> b, TableRouter<T> router) {
    this.tables = SinkTables.of(b.tables);
    this.router = router;
    this.policy =
        new ClosePolicy(b.closePolicy, b.bounds, b.maxOpenPartitions, b.maxParkedPartitions);
    this.rowGroupBytes = Math.max(1, b.bounds.targetFileBytes() / b.rowGroupsPerFile);
    this.uidPrefix = b.uidPrefix;
    this.scope = new SinkScope(b.uidPrefix, b.sinkId, b.claimsUnscopedFiles);
    this.checkpointInterval = b.bounds.checkpointInterval();
    this.listener = b.listener;
    this.start = b.start;
    this.expiry = b.expiry;
  }

  /**
   * The sink of elements into the tables the router picks (added in order with {@link
   * Builder#table}); {@link Builder#append} puts the whole contract into a job: the distribution in
   * front of the writers, the writer count it places rows on, and aligned checkpoints.
   */
  @Internal
  public static <T> Builder<T> forRows(TableRouter<T> router) {
    return new Builder<>(router);
  }

  /**
   * The sink of Flink {@code RowData} rows into one table (added with {@link Builder#table}), each
   * row with the table's columns in its order: the entry point for a job of its own.
   */
  public static Builder<RowData> forRowData() {
    return forRows(TableRouter.single());
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) throws IOException {
    return restoreWriter(context, List.of());
  }

  @Override
  public StatefulSinkWriter<T, WriterState> restoreWriter(
      WriterInitContext context, Collection<WriterState> recoveredState) throws IOException {
    return new BufferingWriter<>(
        tables, router, policy, rowGroupBytes, scope, context, recoveredState);
  }

  @Override
  public SimpleVersionedSerializer<WriterState> getWriterStateSerializer() {
    return new WriterStateSerializer();
  }

  @Override
  public Committer<FileBatch> createCommitter(CommitterInitContext context) {
    return new IcebergBatchCommitter(tables, listener, start, expiry, context);
  }

  @Override
  public SimpleVersionedSerializer<FileBatch> getCommittableSerializer() {
    return new FileBatchSerializer(TableSpecs.loadedFrom(tables));
  }

  @Override
  public DataStream<CommittableMessage<FileBatch>> addPreCommitTopology(
      DataStream<CommittableMessage<WriterReport>> reports) {
    return reports
        .global()
        .transform(
            uidPrefix + "-aggregator",
            CommittableMessageTypeInfo.of(FileBatchSerializer::new),
            new FileBatchAggregator(tables, scope, checkpointInterval, start))
        .uid(uidPrefix + "-aggregator")
        .setParallelism(1)
        .setMaxParallelism(1)
        // the committer runs with the writers' parallelism; route everything to its first subtask
        .global();
  }

  @Override
  public SimpleVersionedSerializer<WriterReport> getWriteResultSerializer() {
    return new WriterReportSerializer();
  }

  /**
   * Builder; at least one table, the close policy and the sink id are required. The first table is
   * the primary one.
   */
  public static final class Builder<T> {
    private final TableRouter<T> router;
    private final List<SinkTable> tables = new ArrayList<>();
    private ClosePolicyKind closePolicy;
    private SizingBounds bounds;
    private int maxOpenPartitions = SinkOptions.MAX_OPEN_PARTITIONS.defaultValue();
    private int maxParkedPartitions = SinkOptions.MAX_PARKED_PARTITIONS.defaultValue();
    private int rowGroupsPerFile = SinkOptions.ROW_GROUPS_PER_FILE.defaultValue();
    private String uidPrefix = "spatial-sink";
    private String sinkId;
    private boolean claimsUnscopedFiles;
    private PositionsListener listener = PositionsListener.none();
    private StartPositions start;
    private SnapshotExpiry expiry =
        SinkOptions.EXPIRE_SNAPSHOTS.defaultValue() ? SnapshotExpiry.defaults() : null;
    private final List<Boolean> ranged = new ArrayList<>();
    private DistributionMode distribution = DistributionMode.RANGE;
    private int writers;
    private List<? extends RowData> sampledRows = List.of();
    private double rowsPerSampledRow;

    private Builder(TableRouter<T> router) {
      this.router = router;
    }

    /**
     * Adds a table whose partitions the {@code range} distribution splits by Hilbert-key range (its
     * index is the number of tables added before it). The first table is the primary one: its
     * snapshots record the source positions of all tables' rows ({@link SinkTables}).
     */
    public Builder<T> table(TableLoader loader, TableLayout layout) {
      return table(loader, layout, true);
    }

    /**
     * Adds a table; {@code ranged}: the {@code range} distribution may split its partitions by
     * Hilbert-key range (false for a table of few rows, e.g. rejects, which go by partition only).
     */
    public Builder<T> table(TableLoader loader, TableLayout layout, boolean ranged) {
      tables.add(new SinkTable(loader, layout));
      this.ranged.add(ranged);
      return this;
    }

    /**
     * The exchange in front of the writers ({@code sink.distribution}): {@code range} (default),
     * {@code hash} or {@code none}.
     */
    public Builder<T> distribution(DistributionMode mode) {
      this.distribution = mode;
      return this;
    }

    /**
     * Writer subtasks ({@code sink.parallelism}); 0 (default): the environment's parallelism. The
     * distribution places rows on exactly these.
     */
    public Builder<T> writers(int writers) {
      if (writers < 0) {
        throw new IllegalArgumentException("writers must be >= 0");
      }
      this.writers = writers;
      return this;
    }

    /**
     * A sample of a bounded input's rows of the first ranged table, each standing for {@code
     * rowsPerSampledRow} input rows: the {@code range} distribution starts from their key
     * boundaries instead of holding the first rows for its early merge.
     */
    public Builder<T> startingSample(List<? extends RowData> rows, double rowsPerSampledRow) {
      this.sampledRows = rows;
      this.rowsPerSampledRow = rowsPerSampledRow;
      return this;
    }

    /** When files close ({@code sink.close-policy}) and the M, T, L and C it works with. */
    public Builder<T> closePolicy(ClosePolicyKind closePolicy, SizingBounds bounds) {
      this.closePolicy = closePolicy;
      this.bounds = bounds;
      return this;
    }

    /**
     * Parquet row groups per data file: row groups of T / n bytes, each with its own statistics, so
     * a filter skips most of a sorted file; a table's {@code write.parquet.row-group-size-bytes}
     * wins. Default: {@code sink.row-groups-per-file}'s.
     */
    public Builder<T> rowGroupsPerFile(int rowGroupsPerFile) {
      if (rowGroupsPerFile <= 0) {
        throw new IllegalArgumentException("rowGroupsPerFile must be > 0");
      }
      this.rowGroupsPerFile = rowGroupsPerFile;
      return this;
    }

    /**
     * Partition buffers per table per writer held in memory; past it the least recently written is
     * parked (see {@link #maxParkedPartitions}).
     */
    public Builder<T> maxOpenPartitions(int maxOpenPartitions) {
      if (maxOpenPartitions <= 0) {
        throw new IllegalArgumentException("maxOpenPartitions must be > 0");
      }
      this.maxOpenPartitions = maxOpenPartitions;
      return this;
    }

    /**
     * Parked buffers per table per writer (rows in staging runs only, closed later by T, L or the
     * end of input); past it the least recently written parked one closes ({@code
     * partition_limit}). 0: none is parked, the least recently written open buffer closes. Default:
     * {@code sink.max-parked-partitions}'s.
     */
    public Builder<T> maxParkedPartitions(int maxParkedPartitions) {
      if (maxParkedPartitions < 0) {
        throw new IllegalArgumentException("maxParkedPartitions must be >= 0");
      }
      this.maxParkedPartitions = maxParkedPartitions;
      return this;
    }

    /**
     * Prefix of the uids of the sink's own operators and of its file names; keep it stable across
     * upgrades.
     */
    public Builder<T> uidPrefix(String uidPrefix) {
      this.uidPrefix = uidPrefix;
      return this;
    }

    /**
     * The sink id ({@code sink.id}): scopes the sink's staging runs, data file names, orphan
     * clean-up and liveness lease in its tables, so several jobs can write one table, each with its
     * own id; a second live job with the same id on the same table is refused at start.
     *
     * @param claimsUnscopedFiles whether this sink also owns the staging runs and data files that
     *     builds before sink ids wrote (no id in their path or name): true for the default id, the
     *     one an upgraded single-job deployment keeps; at most one job per table may claim them
     */
    public Builder<T> sinkId(String sinkId, boolean claimsUnscopedFiles) {
      this.sinkId = sinkId;
      this.claimsUnscopedFiles = claimsUnscopedFiles;
      return this;
    }

    /**
     * Told the positions after every commit of the primary table (e.g. to publish them as consumer
     * offsets).
     */
    public Builder<T> positionsListener(PositionsListener listener) {
      this.listener = listener;
      return this;
    }

    /**
     * What a start without state begins from and which Kafka the positions are taken from ({@link
     * StartPositions}): the sink id its commits record and tag, the ids, and what its first commit
     * records. Default: none known, sink id {@code uidPrefix}.
     */
    public Builder<T> startPositions(StartPositions start) {
      this.start = start;
      return this;
    }

    /**
     * How the committer expires the tables' snapshots after its commits ({@link SnapshotExpiry});
     * default: {@link SnapshotExpiry#defaults()}. {@code maxAge} must cover {@code
     * sink.max-latency} plus the checkpoint interval.
     */
    public Builder<T> snapshotExpiry(SnapshotExpiry expiry) {
      this.expiry = java.util.Objects.requireNonNull(expiry, "expiry");
      return this;
    }

    /** No snapshot expiry by the sink: the application runs its own table maintenance. */
    public Builder<T> noSnapshotExpiry() {
      this.expiry = null;
      return this;
    }

    /** The sink as the last step of {@code input}'s job ({@link #append(List)}). */
    public DataStreamSink<?> append(DataStream<T> input) {
      return append(List.of(input));
    }

    /**
     * The sink as the last step of {@code inputs}' job (e.g. rows and rejects of one transform):
     * behind the distribution's exchange unless it is {@code none}, with the writer count it places
     * rows on, uids {@code <uidPrefix>} (writers, committer) and {@code <uidPrefix>-distribution};
     * turns unaligned checkpoints off, since the positions the sink records rely on every record
     * before a barrier having reached the writers.
     */
    public DataStreamSink<?> append(List<DataStream<T>> inputs) {
      StreamExecutionEnvironment env = inputs.get(0).getExecutionEnvironment();
      if (env.getCheckpointConfig().isUnalignedCheckpointsEnabled()) {
        LOG.warn(
            "execution.checkpointing.unaligned.enabled is true; the sink needs aligned checkpoints: disabled");
      }
      env.getCheckpointConfig().enableUnalignedCheckpoints(false);
      DataStreamSink<?> sink;
      if (distribution == DistributionMode.NONE) {
        DataStream<T> input = inputs.get(0);
        for (DataStream<T> other : inputs.subList(1, inputs.size())) {
          input = input.union(other);
        }
        sink = input.sinkTo(build());
      } else {
        seedRatioFromSample();
        Distribution.Builder<T> exchange =
            Distribution.builder(router)
                .mode(distribution)
                .bounds(bounds, maxOpenPartitions)
                .writers(writers > 0 ? writers : env.getParallelism())
                .startingSample(sampledRows, rowsPerSampledRow)
                .uid(uidPrefix + "-distribution");
        for (int t = 0; t < tables.size(); t++) {
          exchange.table(tables.get(t).loader(), tables.get(t).layout(), ranged.get(t));
        }
        sink = exchange.build().apply(inputs).sinkTo(sinkOf(TableRouter.batched()));
      }
      sink.name(uidPrefix).uid(uidPrefix);
      return writers > 0 ? sink.setParallelism(writers) : sink;
    }

    /**
     * The sink alone, without the distribution and the checkpoint rules: for this package and its
     * tests' operator harnesses only. A job gets the sink through {@link #append}, which puts the
     * whole contract in (exchange, writer count, aligned checkpoints), so it cannot be bypassed by
     * accident with {@code sinkTo(builder.build())}.
     */
    BoundedIcebergSink<T> build() {
      return sinkOf(router);
    }

    /**
     * For a starting sample of a table without a commit of the sink: the Parquet/buffered ratio of
     * the sample written as the writers write it ({@link SinkFiles#encodedPerBufferedByte}), which
     * the table's writers then start from instead of 1 (each writer's first file closed at a
     * quarter to a third of T on points). The range count keeps 1 until the table has a commit:
     * with the sample's ratio it cut a partition of 8 files' worth into half as many ranges, each
     * file then spanned a quarter of the partition's keys, and a 10° box kept 44 % of the files at
     * 4 writers instead of 22 % (benchmarks.md, "Few writers for little data"). Without a sample, a
     * ratio of the table's, or a measurement (it failed), the writers start from 1 as before.
     */
    private void seedRatioFromSample() {
      int first = ranged.indexOf(true);
      if (sampledRows.isEmpty() || first < 0) {
        return;
      }
      SinkTable target = tables.get(first);
      try (TableLoader loader = target.loader().clone()) {
        loader.open();
        Table table = loader.loadTable();
        Snapshot current = table.currentSnapshot();
        if (current != null && SnapshotSummaryKeys.encodedPerBufferedByte(current.summary()) > 0) {
          return;
        }
        double ratio = SinkFiles.encodedPerBufferedByte(table, target.layout(), sampledRows);
        if (ratio > 0) {
          tables.set(first, new SinkTable(target.loader(), target.layout(), ratio));
          LOG.info(
              "{}: {} sampled rows encode to {} Parquet bytes per buffered byte; its writers start"
                  + " from that",
              table.name(),
              sampledRows.size(),
              String.format(Locale.ROOT, "%.3f", ratio));
        }
      } catch (IOException | RuntimeException e) {
        // an optimisation: without it the first files are short, as before
        LOG.warn("could not measure the Parquet ratio of the input sample: {}", e.toString(), e);
      }
    }

    private <R> BoundedIcebergSink<R> sinkOf(TableRouter<R> elements) {
      if (tables.isEmpty() || closePolicy == null || bounds == null || sinkId == null) {
        throw new IllegalStateException(
            "at least one table (loader and layout), a closePolicy and a sinkId are required");
      }
      if (start == null) {
        start = StartPositions.none(sinkId);
      }
      Duration window = bounds.maxLatency().plus(bounds.checkpointInterval());
      if (expiry != null && expiry.maxAge().compareTo(window) < 0) {
        throw new IllegalArgumentException(
            SinkOptions.EXPIRE_MAX_AGE.key()
                + " ("
                + expiry.maxAge()
                + ") must be at least "
                + SinkOptions.MAX_LATENCY.key()
                + " + the checkpoint interval ("
                + window
                + "): the sink looks up its batches in the snapshots of that window before every"
                + " commit");
      }
      return new BoundedIcebergSink<>(this, elements);
    }
  }
}
