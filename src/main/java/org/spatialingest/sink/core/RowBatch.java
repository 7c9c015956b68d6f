package org.spatialingest.sink.core;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple5;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;

/**
 * Rows a distribution step sends to one writer as one record: all of one table, partition and
 * writer buffer ({@link TableRouter#bufferId}), each as its {@code RowDataSerializer} bytes
 * (length, then the binary row), which is what the writer buffers. One record per batch instead of
 * one per row: the exchange's per-record work (record header, channel selection, the writer's input
 * and deserialization) is paid once per batch, the row is copied as bytes, and the writer takes the
 * partition from the batch, not from each row. Fields: {@code f0} the writer slot (the exchange
 * takes it modulo the writer count), {@code f1} the table index, {@code f2} the partition spec id
 * the batch was grouped by, {@code f3} the buffer id, {@code f4} the rows.
 */
@Internal
public final class RowBatch extends Tuple5<Integer, Integer, Integer, Integer, byte[]> {
  private static final long serialVersionUID = 1L;

  /** The spec id of a batch whose rows were not grouped by partition (each row's is computed). */
  public static final int NOT_GROUPED = -1;

  public static final TupleTypeInfo<RowBatch> TYPE =
      new TupleTypeInfo<>(
          RowBatch.class,
          Types.INT,
          Types.INT,
          Types.INT,
          Types.INT,
          Types.PRIMITIVE_ARRAY(Types.BYTE));

  /** For Flink's serializer. */
  public RowBatch() {}

  public RowBatch(int slot, int table, int specId, int bufferId, byte[] rows) {
    super(slot, table, specId, bufferId, rows);
  }

  public int slot() {
    return f0;
  }

  public int table() {
    return f1;
  }

  public int specId() {
    return f2;
  }

  /** See {@link TableRouter#bufferId}. */
  public int bufferId() {
    return f3;
  }

  /** The rows, back to back: per row a big-endian int length, then that many bytes. */
  public byte[] rows() {
    return f4;
  }

  /** The length of the row at {@code offset} in {@link #rows()}. */
  public static int rowLength(byte[] rows, int offset) {
    return ((rows[offset] & 0xff) << 24)
        | ((rows[offset + 1] & 0xff) << 16)
        | ((rows[offset + 2] & 0xff) << 8)
        | (rows[offset + 3] & 0xff);
  }
}
