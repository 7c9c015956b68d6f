package org.spatialingest.sink.write;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.RowDataWrapper;
import org.spatialingest.table.SourcePositionReader;
import org.spatialingest.table.TableLayout;

/**
 * The open {@link PartitionBuffer}s of one writer, keyed by table partition and buffer id (the one
 * a distribution step assigned the row to, {@link
 * org.spatialingest.sink.core.TableRouter#bufferId}; 0 without one), with the totals the close
 * decisions need. Grouping rows into partitions happens here only, for the sink's writer and for
 * tools that write files the same way ({@link SinkFiles}).
 */
final class PartitionBuffers {
  private final TableLayout layout;
  private final int sortKeyField;
  private final PartitionKey partitionKey;
  private final RowDataWrapper wrapper;
  private final SourcePositionReader sourcePositions;
  private final SourceMarks highestReceived;

  /** per partition, its open buffers indexed by buffer id (most partitions have id 0 only) */
  private final Map<StructLike, PartitionBuffer[]> buffers = new HashMap<>();

  /** buffers held in memory (not parked) */
  private int open;

  private int parked;

  /** bytes held in memory (parked rows excluded) */
  private long bytes;

  private long rows;
  private long writeSequence;

  PartitionBuffers(Table table, TableLayout layout) {
    this(table, layout, null);
  }

  /**
   * @param highestReceived where the highest received source position per key is kept (shared by
   *     the writer's tables), or {@code null} not to track positions
   */
  PartitionBuffers(Table table, TableLayout layout, SourceMarks highestReceived) {
    this.layout = layout;
    this.sourcePositions = highestReceived == null ? null : layout.sourcePositions();
    this.highestReceived = highestReceived;
    this.sortKeyField = layout.sortKeyField();
    Schema rows = layout.writeSchema(table.schema());
    this.partitionKey = new PartitionKey(table.spec(), rows);
    this.wrapper = new RowDataWrapper(layout.rowType(), rows.asStruct());
  }

  /** Adds a row (and its serialized form) to the buffer of its partition, opening one if needed. */
  PartitionBuffer add(RowData row, byte[] serialized) {
    return add(row, 0, serialized, 0, serialized.length, false);
  }

  /**
   * As {@link #add(RowData, byte[])}, into the buffer of the row's partition and {@code bufferId},
   * for the first {@code length} bytes of {@code serialized}.
   */
  PartitionBuffer add(RowData row, int bufferId, byte[] serialized, int length) {
    return add(row, bufferId, serialized, 0, length, false);
  }

  /**
   * As {@link #add(RowData, int, byte[], int)}, for {@code length} bytes of {@code serialized} from
   * {@code offset}. {@code samePartition}: the row is of the partition of the previous row added
   * (rows of one batch), so its partition key is not computed again.
   */
  PartitionBuffer add(
      RowData row, int bufferId, byte[] serialized, int offset, int length, boolean samePartition) {
    if (!samePartition) {
      partitionKey.partition(wrapper.wrap(row));
    }
    PartitionBuffer[] byId = buffers.get(partitionKey);
    if (byId == null || byId.length <= bufferId) {
      StructLike partition = byId == null ? partitionKey.copy() : firstNonNull(byId);
      byId = byId == null ? new PartitionBuffer[bufferId + 1] : Arrays.copyOf(byId, bufferId + 1);
      buffers.put(partition, byId);
    }
    PartitionBuffer buffer = byId[bufferId];
    if (buffer == null) {
      StructLike partition = firstNonNull(byId);
      buffer = new PartitionBuffer(partition == null ? partitionKey.copy() : partition, bufferId);
      byId[bufferId] = buffer;
      open++;
    } else if (buffer.isParked()) {
      // reopened: its parked rows stay in their runs until the buffer closes
      parked--;
      open++;
    }
    long sortKey = sortKeyField < 0 ? 0L : row.getLong(sortKeyField);
    bytes +=
        buffer.add(serialized, offset, length, sortKey, layout.ingestMillis(row), ++writeSequence);
    rows++;
    if (sourcePositions != null) {
      StringData key = sourcePositions.key(row);
      if (key != null) {
        long position = sourcePositions.position(row);
        buffer.markSource(key, position);
        highestReceived.mark(key, position);
      }
    }
    return buffer;
  }

  void remove(PartitionBuffer buffer) {
    PartitionBuffer[] byId = buffers.get(buffer.partition());
    if (byId == null || byId.length <= buffer.bufferId() || byId[buffer.bufferId()] != buffer) {
      return;
    }
    byId[buffer.bufferId()] = null;
    if (firstNonNull(byId) == null) {
      buffers.remove(buffer.partition());
    }
    if (buffer.isParked()) {
      parked--;
    } else {
      open--;
    }
    bytes -= buffer.memoryBytes();
    rows -= buffer.size();
  }

  /**
   * Parks a buffer (or, if parked already, drops the rows staged since): its staged rows leave
   * memory.
   */
  void park(PartitionBuffer buffer) {
    boolean wasParked = buffer.isParked();
    bytes -= buffer.park();
    if (!wasParked) {
      open--;
      parked++;
    }
  }

  /** The parked buffer with the most bytes still in memory (not yet staged), or {@code null}. */
  PartitionBuffer largestParkedInMemory() {
    PartitionBuffer largest = null;
    for (PartitionBuffer b : all()) {
      if (b.isParked()
          && b.memoryBytes() > 0
          && (largest == null || b.memoryBytes() > largest.memoryBytes())) {
        largest = b;
      }
    }
    return largest;
  }

  /**
   * Reads a buffer's parked rows back into memory (from {@code rows}, as its runs hold them), so it
   * can be written; their sort keys are read from the rows.
   */
  void loadParked(PartitionBuffer buffer, List<byte[]> rows) {
    boolean wasParked = buffer.isParked();
    long[] sortKeys = new long[rows.size()];
    if (sortKeyField >= 0) {
      BinaryRowData row = new BinaryRowData(layout.fieldCount());
      for (int i = 0; i < sortKeys.length; i++) {
        byte[] serialized = rows.get(i);
        // after the serializer's length, as the writer points rows at batches
        row.pointTo(
            MemorySegmentFactory.wrap(serialized),
            Integer.BYTES,
            serialized.length - Integer.BYTES);
        sortKeys[i] = row.getLong(sortKeyField);
      }
    }
    bytes += buffer.loadParked(rows, sortKeys);
    if (wasParked) {
      parked--;
      open++;
    }
  }

  /** A snapshot of the open buffers, safe to close while iterating. */
  List<PartitionBuffer> all() {
    List<PartitionBuffer> all = new ArrayList<>(open);
    for (PartitionBuffer[] byId : buffers.values()) {
      for (PartitionBuffer b : byId) {
        if (b != null) {
          all.add(b);
        }
      }
    }
    return all;
  }

  /**
   * A snapshot of the open buffers grouped by partition, each group in buffer-id (key) order
   * (neighbours in Hilbert order next to each other), safe to close while iterating.
   */
  List<List<PartitionBuffer>> byPartition() {
    List<List<PartitionBuffer>> all = new ArrayList<>(buffers.size());
    for (PartitionBuffer[] byId : buffers.values()) {
      List<PartitionBuffer> partition = new ArrayList<>(byId.length);
      for (PartitionBuffer b : byId) {
        if (b != null) {
          partition.add(b);
        }
      }
      all.add(partition);
    }
    return all;
  }

  /** Open buffers (partition and buffer id pairs) held in memory, parked ones not counted. */
  int size() {
    return open;
  }

  /** Parked buffers. */
  int parked() {
    return parked;
  }

  boolean isEmpty() {
    return open == 0 && parked == 0;
  }

  /** Serialized bytes of all buffers held in memory, as accounted against the memory budget. */
  long bytes() {
    return bytes;
  }

  long rows() {
    return rows;
  }

  /** The buffer with the most bytes in memory, or {@code null} when none holds any. */
  PartitionBuffer largest() {
    return largest(List.of());
  }

  /** As {@link #largest()}, among the buffers not in {@code except}. */
  PartitionBuffer largest(List<PartitionBuffer> except) {
    PartitionBuffer largest = null;
    for (PartitionBuffer b : all()) {
      if (b.memoryBytes() > 0
          && !except.contains(b)
          && (largest == null || b.memoryBytes() > largest.memoryBytes())) {
        largest = b;
      }
    }
    return largest;
  }

  /** The least recently written buffer held in memory, or {@code null}. */
  PartitionBuffer leastRecentlyWritten() {
    return leastRecentlyWritten(false);
  }

  /** The least recently written parked buffer, or {@code null}. */
  PartitionBuffer leastRecentlyWrittenParked() {
    return leastRecentlyWritten(true);
  }

  private PartitionBuffer leastRecentlyWritten(boolean parkedOnes) {
    PartitionBuffer oldest = null;
    for (PartitionBuffer[] byId : buffers.values()) {
      for (PartitionBuffer b : byId) {
        if (b != null
            && b.isParked() == parkedOnes
            && (oldest == null || b.lastWriteSequence() < oldest.lastWriteSequence())) {
          oldest = b;
        }
      }
    }
    return oldest;
  }

  /** Bytes of parked rows, in staging runs only. */
  long parkedBytes() {
    long parkedBytes = 0;
    for (PartitionBuffer b : all()) {
      parkedBytes += b.parkedBytes();
    }
    return parkedBytes;
  }

  /** Ingest time of the oldest buffered row, or {@code Long.MAX_VALUE} when nothing is buffered. */
  long oldestIngestMillis() {
    long oldest = Long.MAX_VALUE;
    for (PartitionBuffer b : all()) {
      oldest = Math.min(oldest, b.minIngestMillis());
    }
    return oldest;
  }

  private static StructLike firstNonNull(PartitionBuffer[] byId) {
    for (PartitionBuffer b : byId) {
      if (b != null) {
        return b.partition();
      }
    }
    return null;
  }
}
