package org.spatialingest.sink.commit;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.SinkFileNames;

/**
 * A pending batch's closed files, kept in the table's storage rather than in Flink state (as
 * Iceberg's own Flink sink keeps its pending manifests): the aggregator writes them once, as the
 * writers encoded them ({@link ClosedFiles}: an Iceberg manifest per table and spec, plus the
 * sink's fields), to {@link SinkFileNames#batchFile}; the committable and the committer's state
 * carry only this reference and header, a few hundred bytes whatever the batch's size. The
 * committer reads the file once, when it commits the batch, and deletes it afterwards; the
 * aggregator's orphan clean-up removes those a failed attempt left.
 *
 * <p>File layout: {@link #MAGIC}, {@link #FORMAT}, then {@link ClosedFiles#write}.
 *
 * @param location where the closed files are
 * @param batchId the batch's id ({@link FileBatch#batchIdOf}), known without reading the file
 * @param fileCount how many closed files it holds
 * @param createdAtMillis when the oldest of them was closed (bounds the duplicate look-up)
 */
@Internal
public record StoredBatch(String location, String batchId, int fileCount, long createdAtMillis) {
  private static final int MAGIC = 0x53494231; // "SIB1"
  private static final int FORMAT = 1;

  /**
   * Writes {@code files} to {@code location} (replacing a file there) and returns its reference.
   * Costs one streamed write of the groups' bytes as they are (no manifest is encoded again, no
   * copy of the batch in memory) and one pass over each file's sink fields (its close time).
   */
  public static StoredBatch write(FileIO io, String location, ClosedFiles files)
      throws IOException {
    // straight to the file: no copy of the whole batch in memory
    try (DataOutputViewStreamWrapper out =
        new DataOutputViewStreamWrapper(
            new BufferedOutputStream(io.newOutputFile(location).createOrOverwrite(), 1 << 16))) {
      out.writeInt(MAGIC);
      out.writeInt(FORMAT);
      files.write(out);
    }
    return new StoredBatch(
        location, FileBatch.batchIdOf(files.locations()), files.size(), files.minClosedAtMillis());
  }

  /**
   * The closed files, read from storage (their data files are decoded when first asked for).
   *
   * @throws UncheckedIOException if the file is gone or not one this sink wrote; the message names
   *     the batch and what to do
   */
  public ClosedFiles read(FileIO io) {
    try {
      ClosedFiles files = readFile(io, location);
      if (files.size() != fileCount) {
        throw new IOException("holds " + files.size() + " files, expected " + fileCount);
      }
      return files;
    } catch (NotFoundException e) {
      throw new UncheckedIOException(
          new IOException(
              "the closed files of pending batch "
                  + batchId
                  + " ("
                  + fileCount
                  + " files) are gone from "
                  + location
                  + ": a start without state, or a restore of a newer state, removed them as left over."
                  + " Restore a newer checkpoint, or start without state (the job resumes from the"
                  + " table's positions)",
              e));
    } catch (IOException e) {
      throw new UncheckedIOException(
          new IOException("cannot read pending batch " + batchId + " from " + location, e));
    }
  }

  /**
   * The data file locations of the batch stored at {@code location}, or none if the file is gone
   * (its batch was committed). Reads the file and the groups' headers, no manifest.
   */
  static List<String> dataFiles(FileIO io, String location) throws IOException {
    try {
      return readFile(io, location).locations();
    } catch (NotFoundException e) {
      return List.of();
    }
  }

  private static ClosedFiles readFile(FileIO io, String location) throws IOException {
    InputFile file = io.newInputFile(location);
    byte[] bytes = new byte[Math.toIntExact(file.getLength())];
    try (InputStream in = file.newStream()) {
      int read = in.readNBytes(bytes, 0, bytes.length);
      if (read != bytes.length) {
        throw new IOException("read " + read + " of " + bytes.length + " bytes of " + location);
      }
    }
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    int magic = in.readInt();
    int format = in.readInt();
    if (magic != MAGIC || format != FORMAT) {
      throw new IOException(
          location + " is not a batch file of this build (format " + format + ")");
    }
    return ClosedFiles.read(in);
  }

  /** Whether the file is still there (the committer deletes it once the batch is committed). */
  public boolean exists(FileIO io) {
    return io.newInputFile(location).exists();
  }

  void writeReference(DataOutputView out) throws IOException {
    out.writeUTF(location);
    out.writeUTF(batchId);
    out.writeInt(fileCount);
    out.writeLong(createdAtMillis);
  }

  static StoredBatch readReference(DataInputView in) throws IOException {
    return new StoredBatch(in.readUTF(), in.readUTF(), in.readInt(), in.readLong());
  }
}
