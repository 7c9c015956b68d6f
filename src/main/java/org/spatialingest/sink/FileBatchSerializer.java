package org.spatialingest.sink;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned binary form of a {@link FileBatch}, stored in the committer's checkpointed state.
 * Version 2: checkpoint id, lineage, the closed files ({@link ClosedFileCodec}) and the positions.
 * Version 1 (one table, no positions; builds before the sink wrote several tables) is not readable:
 * restore such a savepoint with the build that took it and let it commit, or start without state
 * (the job resumes from the table's positions).
 */
public final class FileBatchSerializer implements SimpleVersionedSerializer<FileBatch> {
  static final int VERSION = 2;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(FileBatch batch) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256 + 2048 * batch.files().size());
    out.writeLong(batch.checkpointId());
    out.writeUTF(batch.lineage());
    ClosedFileCodec.writeFiles(batch.files(), out);
    ClosedFileCodec.writePositions(batch.positions(), out);
    return out.getCopyOfBuffer();
  }

  @Override
  public FileBatch deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException(
          "FileBatch serializer version "
              + version
              + " is not readable by this build (it reads "
              + VERSION
              + "); restore with the build that wrote it, or start without state");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long checkpointId = in.readLong();
    String lineage = in.readUTF();
    return new FileBatch(
        checkpointId, lineage, ClosedFileCodec.readFiles(in), ClosedFileCodec.readPositions(in));
  }
}
