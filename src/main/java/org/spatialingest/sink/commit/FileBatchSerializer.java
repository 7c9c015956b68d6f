package org.spatialingest.sink.commit;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.spatialingest.sink.compat.JavaSerializedFiles;
import org.spatialingest.sink.compat.ManifestLayoutFiles;
import org.spatialingest.sink.compat.TableSpecs;
import org.spatialingest.sink.core.ClosedFileManifests;
import org.spatialingest.sink.core.ClosedFiles;

/**
 * Versioned binary form of a {@link FileBatch}, stored in the committer's checkpointed state.
 * Version 5: checkpoint id, lineage, a flag, then either the {@link StoredBatch} reference
 * (location, batch id, file count, creation time: the files stay in storage) or the closed files
 * inline as in version 4, then the positions. Version 4 (read only; builds up to b0e0565):
 * checkpoint id, lineage, the closed files as {@link ClosedFiles} (the groups' bytes as the writers
 * encoded them: an Iceberg manifest per table and spec, with the sink's fields) and the positions.
 * Version 3 (read only; builds up to 5e92675): the same files in the layout the compat room's
 * {@link ManifestLayoutFiles} reads. Version 2 (read only; releases up to 99d1af5): each data file
 * in Java serialization, read by the compat room's {@link JavaSerializedFiles}, which gives each
 * file its partition spec from its table ({@link TableSpecs}). Version 1 (one table, no positions)
 * is not readable: restore such a savepoint with the build that took it and let it commit, or start
 * without state (the job resumes from the table's positions).
 */
@Internal
public final class FileBatchSerializer implements SimpleVersionedSerializer<FileBatch> {
  /** Closed files inline or as a reference to a stored batch ({@link StoredBatch}). */
  static final int V5_STORED_BATCH = 5;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V5_STORED_BATCH;

  /** The version whose closed files are always inline; read only. */
  private static final int INLINE_V4 = 4;

  /** The version whose manifests are in the layout before {@link ClosedFiles}; read only. */
  private static final int MANIFEST_LAYOUT_V3 = 3;

  /** The version whose data files are Java-serialized; read only. */
  private static final int JAVA_SERIALIZED_FILES = 2;

  /** Every version this build reads. */
  static final java.util.Set<Integer> READS =
      java.util.Set.of(JAVA_SERIALIZED_FILES, MANIFEST_LAYOUT_V3, INLINE_V4, V5_STORED_BATCH);

  private final TableSpecs specs;

  /**
   * A serializer for the committer's state: {@code specs} resolves the partition specs of version
   * 2's files (asked only when such a state is read).
   */
  public FileBatchSerializer(TableSpecs specs) {
    this.specs = specs;
  }

  /**
   * A serializer for batches of this build only, as they travel from the aggregator to the
   * committer: it reads every version but 2, whose files need their tables' specs.
   */
  public FileBatchSerializer() {
    this(TableSpecs.none());
  }

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(FileBatch batch) throws IOException {
    int inlineFiles = batch.inline() == null ? 0 : batch.inline().size();
    DataOutputSerializer out =
        new DataOutputSerializer(512 + 1024 * inlineFiles + 32 * batch.positions().size());
    out.writeLong(batch.checkpointId());
    out.writeUTF(batch.lineage());
    out.writeBoolean(batch.stored() != null);
    if (batch.stored() != null) {
      batch.stored().writeReference(out);
    } else {
      batch.inline().write(out);
    }
    ClosedFileManifests.writePositions(batch.positions(), out);
    return out.getCopyOfBuffer();
  }

  @Override
  public FileBatch deserialize(int version, byte[] serialized) throws IOException {
    if (!READS.contains(version)) {
      throw new IOException(
          "FileBatch serializer version "
              + version
              + " is not readable by this build (it reads "
              + READS
              + "); restore with the build that wrote it, or start without state");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long checkpointId = in.readLong();
    String lineage = in.readUTF();
    if (version == V5_STORED_BATCH && in.readBoolean()) {
      StoredBatch stored = StoredBatch.readReference(in);
      return new FileBatch(checkpointId, lineage, stored, ClosedFileManifests.readPositions(in));
    }
    ClosedFiles files =
        switch (version) {
          case V5_STORED_BATCH, INLINE_V4 -> ClosedFiles.read(in);
          case MANIFEST_LAYOUT_V3 -> ClosedFiles.of(ManifestLayoutFiles.read(in));
          case JAVA_SERIALIZED_FILES -> ClosedFiles.of(JavaSerializedFiles.read(in, specs));
          default -> throw new IllegalStateException("version " + version + " has no read branch");
        };
    return new FileBatch(checkpointId, lineage, files, ClosedFileManifests.readPositions(in));
  }
}
