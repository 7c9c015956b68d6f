package org.spatialingest.sink;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
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
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.flink.TableLoader;

/**
 * The byte-and-time bounded, checkpoint-aligned Iceberg sink.
 *
 * <p>Data path: {@link BufferingWriter} (parallel; buffers rows per partition, closes files when the
 * {@link ClosePolicy} says so) → {@link FileBatchAggregator} (parallelism 1; one batch per checkpoint) →
 * {@link IcebergBatchCommitter} (one snapshot per checkpoint that closed files, after the checkpoint completes).
 * Build it with {@link #builder()}.
 */
public final class BoundedIcebergSink
    implements Sink<RowData>,
        SupportsWriterState<RowData, WriterState>,
        SupportsCommitter<FileBatch>,
        SupportsPreCommitTopology<FileBatch, FileBatch> {
  private final TableLoader tableLoader;
  private final TableLayout layout;
  private final ClosePolicy policy;
  private final int maxOpenPartitions;
  private final String uidPrefix;

  private BoundedIcebergSink(TableLoader tableLoader, TableLayout layout, ClosePolicy policy, int maxOpenPartitions,
      String uidPrefix) {
    this.tableLoader = tableLoader;
    this.layout = layout;
    this.policy = policy;
    this.maxOpenPartitions = maxOpenPartitions;
    this.uidPrefix = uidPrefix;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public SinkWriter<RowData> createWriter(WriterInitContext context) throws IOException {
    return restoreWriter(context, List.of());
  }

  @Override
  public StatefulSinkWriter<RowData, WriterState> restoreWriter(WriterInitContext context,
      Collection<WriterState> recoveredState) throws IOException {
    return new BufferingWriter(tableLoader.clone(), layout, policy, maxOpenPartitions, context, recoveredState);
  }

  @Override
  public SimpleVersionedSerializer<WriterState> getWriterStateSerializer() {
    return new WriterStateSerializer();
  }

  @Override
  public Committer<FileBatch> createCommitter(CommitterInitContext context) {
    return new IcebergBatchCommitter(tableLoader.clone(), context);
  }

  @Override
  public SimpleVersionedSerializer<FileBatch> getCommittableSerializer() {
    return new FileBatchSerializer();
  }

  @Override
  public DataStream<CommittableMessage<FileBatch>> addPreCommitTopology(
      DataStream<CommittableMessage<FileBatch>> committables) {
    return committables
        .global()
        .transform(uidPrefix + "-aggregator", CommittableMessageTypeInfo.of(FileBatchSerializer::new),
            new FileBatchAggregator(tableLoader))
        .uid(uidPrefix + "-aggregator")
        .setParallelism(1)
        .setMaxParallelism(1)
        // the committer runs with the writers' parallelism; route everything to its first subtask
        .global();
  }

  @Override
  public SimpleVersionedSerializer<FileBatch> getWriteResultSerializer() {
    return new FileBatchSerializer();
  }

  /** Builder; the table loader, layout and close policy are required. */
  public static final class Builder {
    private TableLoader tableLoader;
    private TableLayout layout;
    private ClosePolicy policy;
    private int maxOpenPartitions = 8;
    private String uidPrefix = "spatial-sink";

    public Builder tableLoader(TableLoader tableLoader) {
      this.tableLoader = tableLoader;
      return this;
    }

    public Builder layout(TableLayout layout) {
      this.layout = layout;
      return this;
    }

    public Builder closePolicy(ClosePolicy policy) {
      this.policy = policy;
      return this;
    }

    public Builder maxOpenPartitions(int maxOpenPartitions) {
      if (maxOpenPartitions <= 0) {
        throw new IllegalArgumentException("maxOpenPartitions must be > 0");
      }
      this.maxOpenPartitions = maxOpenPartitions;
      return this;
    }

    /** Prefix of the uids of the sink's own operators; keep it stable across upgrades. */
    public Builder uidPrefix(String uidPrefix) {
      this.uidPrefix = uidPrefix;
      return this;
    }

    public BoundedIcebergSink build() {
      if (tableLoader == null || layout == null || policy == null) {
        throw new IllegalStateException("tableLoader, layout and closePolicy are required");
      }
      return new BoundedIcebergSink(tableLoader, layout, policy, maxOpenPartitions, uidPrefix);
    }
  }
}
