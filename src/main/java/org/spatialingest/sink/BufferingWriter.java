package org.spatialingest.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.OutputFileFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A writer subtask of the bounded sink. Rows are buffered per time partition as serialized bytes, measured as they
 * arrive; the {@link ClosePolicy} decides at each barrier which partitions become data files, and between barriers
 * whether the memory budget forces one out. Files closed in an interval go downstream as one {@link FileBatch} at the
 * next barrier; rows still buffered are the writer's checkpointed state, so they survive a failure without closing a
 * file at every checkpoint.
 *
 * <p>All encoding and I/O happens on the task thread inside {@code write}/{@code prepareCommit}: when the writer
 * cannot keep up, Flink's credit-based flow control pauses the source and the backlog stays in Kafka.
 */
final class BufferingWriter implements CommittingSinkWriter<RowData, FileBatch>, StatefulSinkWriter<RowData, WriterState> {
  private static final Logger LOG = LoggerFactory.getLogger(BufferingWriter.class);
  /** Until this writer has closed a file, assume Parquet output is as large as the buffer (files undershoot T). */
  private static final double DEFAULT_ENCODED_RATIO = 1.0;
  /** Weight of history when learning the encoded/buffered ratio from each closed file. */
  private static final double RATIO_DECAY = 0.7;

  private final ClosePolicy policy;
  private final int maxOpenPartitions;
  private final TableLoader tableLoader;
  private final Table table;
  private final SortedFileWriter fileWriter;
  private final TableLayout layout;
  private final RowDataSerializer serializer;
  private final BufferedRowSize rowSize;
  private final PartitionBuffers buffers;
  /** files closed since the last barrier, one part each; merged into the barrier's batch */
  private final List<FileBatch> closed = new ArrayList<>();
  private double ratioEncoded;
  private double ratioBuffered;
  /** ratioEncoded / ratioBuffered, kept current so the per-record target check is one comparison */
  private double encodedRatio = DEFAULT_ENCODED_RATIO;
  private final Map<CloseReason, Counter> filesClosed = new EnumMap<>(CloseReason.class);

  BufferingWriter(TableLoader tableLoader, TableLayout layout, ClosePolicy policy, int maxOpenPartitions,
      WriterInitContext context, Collection<WriterState> restored) throws IOException {
    this.layout = layout;
    this.serializer = new RowDataSerializer(layout.rowType());
    this.rowSize = new BufferedRowSize(serializer);
    this.policy = policy;
    this.maxOpenPartitions = maxOpenPartitions;
    this.tableLoader = tableLoader;
    tableLoader.open();
    this.table = tableLoader.loadTable();
    this.buffers = new PartitionBuffers(table, layout);
    OutputFileFactory files = OutputFileFactory.builderFor(table, context.getTaskInfo().getIndexOfThisSubtask(),
            context.getTaskInfo().getAttemptNumber())
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
    this.fileWriter = new SortedFileWriter(table, layout, files, serializer);
    seedEncodedRatio(table.currentSnapshot());
    registerMetrics(context.metricGroup().addGroup("spatialSink"));
    DataInputDeserializer in = new DataInputDeserializer();
    RowData reuse = new BinaryRowData(layout.fieldCount());
    for (WriterState state : restored) {
      for (byte[] row : state.rows()) {
        in.setBuffer(row);
        reuse = serializer.deserialize(reuse, in);
        buffer(reuse, row, row.length);
      }
    }
    if (!buffers.isEmpty()) {
      LOG.info("Restored {} buffered rows ({} bytes) in {} partitions", buffers.rows(), buffers.bytes(),
          buffers.size());
    }
    enforceMemoryBudget();
  }

  @Override
  public void write(RowData row, Context context) throws IOException {
    int length = rowSize.serializeShared(row);
    PartitionBuffer buffer = buffer(row, rowSize.sharedBuffer(), length);
    if (policy.targetReached(buffer.bytes(), encodedRatio)) {
      close(buffer, CloseReason.BYTES);
    }
    enforceMemoryBudget();
  }

  @Override
  public void flush(boolean endOfInput) throws IOException {
    if (endOfInput) {
      for (PartitionBuffer buffer : buffers.all()) {
        close(buffer, CloseReason.END_OF_INPUT);
      }
      SinkFaults.reach(SinkFaults.Point.AFTER_END_OF_INPUT);
    }
  }

  @Override
  public Collection<FileBatch> prepareCommit() throws IOException {
    long now = System.currentTimeMillis();
    for (PartitionBuffer buffer : buffers.all()) {
      long oldestAge = now - Math.min(now, buffer.minIngestMillis());
      CloseReason reason = policy.atCheckpoint(buffer.bytes(), encodedRatio, oldestAge);
      if (reason != null) {
        close(buffer, reason);
      }
    }
    if (closed.isEmpty()) {
      return List.of();
    }
    FileBatch batch = FileBatch.merge(0, "", closed);
    closed.clear();
    return List.of(batch);
  }

  @Override
  public List<WriterState> snapshotState(long checkpointId) {
    if (buffers.isEmpty()) {
      return List.of();
    }
    List<byte[]> rows = new ArrayList<>((int) buffers.rows());
    for (PartitionBuffer buffer : buffers.all()) {
      for (int i = 0; i < buffer.size(); i++) {
        rows.add(buffer.copyOfRow(i));
      }
    }
    return List.of(new WriterState(rows));
  }

  @Override
  public void close() throws IOException {
    tableLoader.close();
  }

  private PartitionBuffer buffer(RowData row, byte[] serialized, int length) throws IOException {
    PartitionBuffer buffer = buffers.add(row, serialized, length);
    if (buffers.size() > maxOpenPartitions) {
      // the new row's buffer is the most recently written, so never the one closed here
      close(buffers.leastRecentlyWritten(), CloseReason.PARTITION_LIMIT);
    }
    return buffer;
  }

  /** Memory wins over file size: write the largest buffers until the writer is back under its budget. */
  private void enforceMemoryBudget() throws IOException {
    while (policy.memoryFull(buffers.bytes()) && !buffers.isEmpty()) {
      close(buffers.largest(), CloseReason.MEMORY);
      SinkFaults.reach(SinkFaults.Point.AFTER_MEMORY_FLUSH);
    }
  }

  private void close(PartitionBuffer buffer, CloseReason reason) throws IOException {
    DataFile file = fileWriter.write(buffer);
    buffers.remove(buffer);
    closed.add(new FileBatch(0, List.of(file), List.of(reason), buffer.bytes(), buffer.minIngestMillis(),
        buffer.maxIngestMillis(), System.currentTimeMillis(), Map.of(fileWriter.spec().specId(), fileWriter.spec()),
        Map.of(fileWriter.sortOrder().orderId(), fileWriter.sortOrder()), "", buffer.ingestTimes().toMap()));
    ratioEncoded = ratioEncoded * RATIO_DECAY + file.fileSizeInBytes();
    ratioBuffered = ratioBuffered * RATIO_DECAY + buffer.bytes();
    encodedRatio = ratioEncoded / ratioBuffered;
    filesClosed.get(reason).inc();
    LOG.debug("Closed {} ({} rows, {} buffered bytes -> {} file bytes) by {}", file.location(), file.recordCount(),
        buffer.bytes(), file.fileSizeInBytes(), reason.code());
  }

  /** Start from the ratio the table's last commit of this sink measured, so even the first files land near T. */
  private void seedEncodedRatio(Snapshot snapshot) {
    if (snapshot == null) {
      return;
    }
    String buffered = snapshot.summary().get(SnapshotSummaryKeys.BUFFERED_BYTES);
    String written = snapshot.summary().get(SnapshotSummaryKeys.FILE_BYTES);
    if (buffered != null && written != null) {
      long b = Long.parseLong(buffered);
      long w = Long.parseLong(written);
      if (b > 0 && w > 0) {
        ratioBuffered = b;
        ratioEncoded = w;
        encodedRatio = (double) w / b;
      }
    }
  }

  private void registerMetrics(MetricGroup group) {
    group.gauge("bufferedBytes", buffers::bytes);
    group.gauge("bufferedRecords", buffers::rows);
    group.gauge("openPartitions", buffers::size);
    group.gauge("encodedPerBufferedRatio", () -> encodedRatio);
    group.gauge("oldestBufferedAgeMs", () -> {
      long oldest = buffers.oldestIngestMillis();
      return oldest == Long.MAX_VALUE ? 0L : Math.max(0L, System.currentTimeMillis() - oldest);
    });
    for (CloseReason reason : CloseReason.values()) {
      filesClosed.put(reason, group.counter("filesClosed_" + reason.code()));
    }
  }
}
