package org.spatialingest.sink.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.StructLike;

/**
 * A data manifest of added files whose snapshot id and sequence numbers are not assigned yet, as
 * {@code AppendFiles.appendManifest} adopts one without rewriting it (or, with {@link
 * #withSnapshotId}, as a reader needs one). Its binary form ({@link #write}) is the sink's own:
 * counts and partition summaries in a few bytes, where Iceberg's {@code ManifestFiles.encode}
 * parses an Avro schema per call (a sixth of the committer's CPU at W = 256 when each writer's
 * group carried one).
 *
 * @param snapshotId {@code null} until committed
 * @param partitions per partition field, or {@code null} if unknown
 */
@Internal
public record UnassignedManifest(
    String path,
    long length,
    int partitionSpecId,
    Long snapshotId,
    Integer addedFilesCount,
    Long addedRowsCount,
    List<ManifestFile.PartitionFieldSummary> partitions)
    implements ManifestFile {
  /** What {@code appendManifest} requires of a manifest it assigns the sequence number to. */
  public static final long UNASSIGNED_SEQUENCE = -1;

  /** The same manifest at {@code path} of {@code length} bytes. */
  public UnassignedManifest at(String newPath, long newLength) {
    return new UnassignedManifest(
        newPath,
        newLength,
        partitionSpecId,
        snapshotId,
        addedFilesCount,
        addedRowsCount,
        partitions);
  }

  /** The same manifest naming a snapshot (a reader requires one; entries without one take it). */
  public UnassignedManifest withSnapshotId(long id) {
    return new UnassignedManifest(
        path, length, partitionSpecId, id, addedFilesCount, addedRowsCount, partitions);
  }

  /** Spec id, counts and partition summaries (no path: the bytes travel with it). */
  public void write(DataOutputView out) throws IOException {
    out.writeInt(partitionSpecId);
    out.writeInt(addedFilesCount);
    out.writeLong(addedRowsCount);
    out.writeInt(partitions == null ? -1 : partitions.size());
    if (partitions != null) {
      for (ManifestFile.PartitionFieldSummary p : partitions) {
        out.writeBoolean(p.containsNull());
        out.writeByte(p.containsNaN() == null ? 2 : p.containsNaN() ? 1 : 0);
        writeBuffer(p.lowerBound(), out);
        writeBuffer(p.upperBound(), out);
      }
    }
  }

  /** Reads what {@link #write} wrote; the manifest is at {@code path}, {@code length} bytes. */
  public static UnassignedManifest read(DataInputView in, String path, long length)
      throws IOException {
    int specId = in.readInt();
    int files = in.readInt();
    long rows = in.readLong();
    int fields = in.readInt();
    List<ManifestFile.PartitionFieldSummary> partitions = null;
    if (fields >= 0) {
      partitions = new ArrayList<>(fields);
      for (int i = 0; i < fields; i++) {
        boolean containsNull = in.readBoolean();
        byte nan = in.readByte();
        partitions.add(
            new FieldSummary(
                containsNull, nan == 2 ? null : nan == 1, readBuffer(in), readBuffer(in)));
      }
    }
    return new UnassignedManifest(path, length, specId, null, files, rows, partitions);
  }

  /** {@code manifest}'s counts and summaries, nothing assigned. */
  public static UnassignedManifest of(ManifestFile manifest) {
    return new UnassignedManifest(
        manifest.path(),
        manifest.length(),
        manifest.partitionSpecId(),
        null,
        manifest.addedFilesCount(),
        manifest.addedRowsCount(),
        manifest.partitions());
  }

  private static void writeBuffer(ByteBuffer b, DataOutputView out) throws IOException {
    if (b == null) {
      out.writeInt(-1);
      return;
    }
    ByteBuffer d = b.duplicate();
    byte[] bytes = new byte[d.remaining()];
    d.get(bytes);
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  private static ByteBuffer readBuffer(DataInputView in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] bytes = new byte[n];
    in.readFully(bytes);
    return ByteBuffer.wrap(bytes);
  }

  @Override
  public ManifestContent content() {
    return ManifestContent.DATA;
  }

  @Override
  public long sequenceNumber() {
    return UNASSIGNED_SEQUENCE;
  }

  @Override
  public long minSequenceNumber() {
    return UNASSIGNED_SEQUENCE;
  }

  @Override
  public Integer existingFilesCount() {
    return 0;
  }

  @Override
  public Long existingRowsCount() {
    return 0L;
  }

  @Override
  public Integer deletedFilesCount() {
    return 0;
  }

  @Override
  public Long deletedRowsCount() {
    return 0L;
  }

  @Override
  public ManifestFile copy() {
    return this; // immutable
  }

  /**
   * One partition field's summary; a {@link StructLike} in the order of {@link
   * ManifestFile.PartitionFieldSummary#getType()}, which is how Iceberg's manifest list writer
   * reads it.
   */
  public record FieldSummary(
      boolean containsNull, Boolean containsNaN, ByteBuffer lowerBound, ByteBuffer upperBound)
      implements ManifestFile.PartitionFieldSummary, StructLike {
    @Override
    public ManifestFile.PartitionFieldSummary copy() {
      return this; // immutable
    }

    @Override
    public int size() {
      return 4;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      Object value =
          switch (pos) {
            case 0 -> containsNull;
            case 1 -> containsNaN;
            case 2 -> lowerBound;
            case 3 -> upperBound;
            default -> throw new IndexOutOfBoundsException(pos);
          };
      return javaClass.cast(value);
    }

    @Override
    public <T> void set(int pos, T value) {
      throw new UnsupportedOperationException("a partition field summary is immutable");
    }
  }
}
