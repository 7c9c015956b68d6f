package org.spatialingest.sink.write;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * The one definition of what a buffered row costs the sink: its {@link RowDataSerializer} bytes
 * plus {@link PartitionBuffer#ROW_OVERHEAD_BYTES}. {@link BufferingWriter} serializes every row
 * through an instance of this class and {@link PartitionBuffer} accounts it with {@link
 * #accountedBytes(byte[])}; {@code plan} measures samples with {@link #measure(RowData)}, so the
 * sizing tool and the memory bound count the same bytes.
 *
 * <p>Not thread-safe (it reuses one output buffer): one instance per writer or measuring thread.
 */
@Internal
public final class BufferedRowSize {
  private final RowDataSerializer serializer;
  private final DataOutputSerializer out = new DataOutputSerializer(1024);

  /** Measures rows of {@link TelemetryTable#ROW_TYPE}. */
  public BufferedRowSize() {
    this(new RowDataSerializer(TelemetryTable.ROW_TYPE));
  }

  /**
   * Measures rows of {@code layout} (typed property columns included), as the writer of that table
   * does.
   */
  public BufferedRowSize(TableLayout layout) {
    this(new RowDataSerializer(layout.rowType()));
  }

  BufferedRowSize(RowDataSerializer serializer) {
    this.serializer = serializer;
  }

  /** The row serialized exactly as the writer buffers (and checkpoints) it. */
  public byte[] serialize(RowData row) throws IOException {
    serializeShared(row);
    return out.getCopyOfBuffer();
  }

  /**
   * Serializes the row into this instance's reused buffer ({@link #sharedBuffer()}) and returns its
   * length: the writer copies it straight into its arena, with no intermediate array per row.
   */
  int serializeShared(RowData row) throws IOException {
    out.clear();
    serializer.serialize(row, out);
    return out.length();
  }

  byte[] sharedBuffer() {
    return out.getSharedBuffer();
  }

  /** Bytes the writer accounts against its memory budget for one serialized row. */
  public static long accountedBytes(byte[] serializedRow) {
    return accountedBytes(serializedRow.length);
  }

  static long accountedBytes(int serializedLength) {
    return serializedLength + PartitionBuffer.ROW_OVERHEAD_BYTES;
  }

  /** Bytes the writer accounts for {@code row}: {@code accountedBytes(serialize(row))}. */
  public long measure(RowData row) throws IOException {
    return accountedBytes(serialize(row));
  }
}
