package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.spatialingest.sink.compat.InlineWriterRows;

/**
 * Versioned binary form of {@link WriterState}. Version 4: run count, then table, buffer id, path,
 * row count and parked flag (a byte) per staging run. Version 3 (read only): the same without the
 * flag (nothing parked). Version 2 (read only): the same without the buffer id (id 0). Version 1
 * (read only; builds before staging runs): the rows inline, read by the compat room's {@link
 * InlineWriterRows} into {@link WriterState#unstaged}.
 */
@Internal
public final class WriterStateSerializer implements SimpleVersionedSerializer<WriterState> {
  /** Staging runs with their buffer id and parked flag. */
  static final int V4_PARKED = 4;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V4_PARKED;

  /** Staging runs with their buffer id, nothing parked; read only. */
  private static final int V3_BUFFER_IDS = 3;

  /** Staging runs without a buffer id (id 0); read only. */
  private static final int V2_RUNS = 2;

  /** The version whose rows are inline (builds before staging runs); read only. */
  private static final int INLINE_ROWS_V1 = 1;

  /** Every version this build reads. */
  static final java.util.Set<Integer> READS =
      java.util.Set.of(INLINE_ROWS_V1, V2_RUNS, V3_BUFFER_IDS, V4_PARKED);

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterState state) throws IOException {
    if (!state.unstaged().isEmpty()) {
      throw new IOException(
          "restored unstaged rows are staged at the next barrier; a snapshot holds only runs");
    }
    DataOutputSerializer out = new DataOutputSerializer(16 + 128 * state.runs().size());
    out.writeInt(state.runs().size());
    for (WriterState.StagedRun run : state.runs()) {
      out.writeInt(run.table());
      out.writeInt(run.bufferId());
      out.writeUTF(run.path());
      out.writeLong(run.rows());
      out.writeBoolean(run.parked());
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public WriterState deserialize(int version, byte[] serialized) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    int count = in.readInt();
    if (version == INLINE_ROWS_V1) {
      return new WriterState(List.of(), List.of(InlineWriterRows.read(in, count)));
    }
    if (!READS.contains(version)) {
      throw new IOException(
          "unknown WriterState serializer version "
              + version
              + " (this build reads "
              + READS
              + ")");
    }
    List<WriterState.StagedRun> runs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int table = in.readInt();
      int bufferId = version == V2_RUNS ? 0 : in.readInt();
      String path = in.readUTF();
      long rows = in.readLong();
      boolean parked = version == V4_PARKED && in.readBoolean();
      runs.add(new WriterState.StagedRun(table, bufferId, path, rows, parked));
    }
    return new WriterState(runs);
  }
}
