package org.spatialingest.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned binary form of {@link WriterState}. Version 1: row count, then each row as length and bytes of Flink's
 * {@code RowDataSerializer} form for the sink's {@link TableLayout#rowType()}.
 */
public final class WriterStateSerializer implements SimpleVersionedSerializer<WriterState> {
  static final int VERSION = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterState state) throws IOException {
    long size = 4;
    for (byte[] row : state.rows()) {
      size += 4 + row.length;
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw new IOException("writer state of " + size + " bytes exceeds 2 GiB; lower sink.memory-budget");
    }
    DataOutputSerializer out = new DataOutputSerializer((int) size);
    out.writeInt(state.rows().size());
    for (byte[] row : state.rows()) {
      out.writeInt(row.length);
      out.write(row);
    }
    return out.getSharedBuffer().length == out.length() ? out.getSharedBuffer() : out.getCopyOfBuffer();
  }

  @Override
  public WriterState deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException("unknown WriterState serializer version " + version + " (this build reads " + VERSION
          + ")");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    int count = in.readInt();
    List<byte[]> rows = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      byte[] row = new byte[in.readInt()];
      in.readFully(row);
      rows.add(row);
    }
    return new WriterState(rows);
  }
}
