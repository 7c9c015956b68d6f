package org.spatialingest.sink.compat;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.SinkTables;

/**
 * Reads writer state version 1 (builds before staging runs): the writer's buffered rows inline, a
 * row count, then per row its length and its {@code RowDataSerializer} bytes. They are converted
 * into what a writer receives as input, a {@link RowBatch}: that build wrote only the primary table
 * and had one buffer per partition, and the rows were not grouped by partition (the writer computes
 * each row's). The writer buffers them at restore as it buffers input, and its next barrier writes
 * them to staging runs.
 */
@Internal
public final class InlineWriterRows {
  private InlineWriterRows() {}

  /**
   * The {@code count} rows after the count, as one batch. Each row's bytes are its serializer form
   * (the binary row's length, then the row), which is a batch's layout, so they are copied as they
   * are. Cost: two copies of the rows' bytes.
   */
  public static RowBatch read(DataInputView in, int count) throws IOException {
    DataOutputSerializer rows = new DataOutputSerializer(64 * Math.max(1, count));
    for (int i = 0; i < count; i++) {
      byte[] row = new byte[in.readInt()];
      in.readFully(row);
      if (row.length < Integer.BYTES || RowBatch.rowLength(row, 0) != row.length - Integer.BYTES) {
        throw new IOException(
            "row "
                + i
                + " of a version-1 writer state is not a serialized row ("
                + row.length
                + " bytes)");
      }
      rows.write(row);
    }
    return new RowBatch(0, SinkTables.PRIMARY, RowBatch.NOT_GROUPED, 0, rows.getCopyOfBuffer());
  }
}
