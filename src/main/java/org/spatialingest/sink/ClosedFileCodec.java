package org.spatialingest.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.DataFile;

/**
 * Binary form of {@link ClosedFile}s and string-to-long maps, shared by the sink's versioned
 * serializers. The {@link DataFile} travels in Java serialization, as in Iceberg's own Flink sink:
 * complete by construction, so no field of a data file can be lost on an Iceberg upgrade (what
 * could break there is a changed serialVersionUID, which fails loudly on restore).
 */
final class ClosedFileCodec {
  private ClosedFileCodec() {}

  static void writeFiles(List<ClosedFile> files, DataOutputView out) throws IOException {
    out.writeInt(files.size());
    for (ClosedFile f : files) {
      out.writeInt(f.table());
      byte[] file = InstantiationUtil.serializeObject(f.file());
      out.writeInt(file.length);
      out.write(file);
      out.writeUTF(f.reason().name());
      out.writeLong(f.bufferedBytes());
      out.writeLong(f.minIngestMillis());
      out.writeLong(f.maxIngestMillis());
      out.writeLong(f.closedAtMillis());
      out.writeInt(f.ingestSecondCounts().size());
      for (Map.Entry<Long, Long> e : f.ingestSecondCounts().entrySet()) {
        out.writeLong(e.getKey());
        out.writeLong(e.getValue());
      }
      out.writeInt(f.consumedStaging().size());
      for (String path : f.consumedStaging()) {
        out.writeUTF(path);
      }
    }
  }

  static List<ClosedFile> readFiles(DataInputView in) throws IOException {
    int count = in.readInt();
    List<ClosedFile> files = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int table = in.readInt();
      byte[] bytes = new byte[in.readInt()];
      in.readFully(bytes);
      DataFile file;
      try {
        file =
            InstantiationUtil.deserializeObject(
                bytes, Thread.currentThread().getContextClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IOException("cannot read a data file of the sink's state", e);
      }
      CloseReason reason = CloseReason.valueOf(in.readUTF());
      long buffered = in.readLong();
      long minIngest = in.readLong();
      long maxIngest = in.readLong();
      long closedAt = in.readLong();
      int seconds = in.readInt();
      Map<Long, Long> ingestSeconds = new HashMap<>();
      for (int s = 0; s < seconds; s++) {
        ingestSeconds.put(in.readLong(), in.readLong());
      }
      int staged = in.readInt();
      List<String> consumed = new ArrayList<>(staged);
      for (int s = 0; s < staged; s++) {
        consumed.add(in.readUTF());
      }
      files.add(
          new ClosedFile(
              table,
              file,
              reason,
              buffered,
              minIngest,
              maxIngest,
              closedAt,
              ingestSeconds,
              consumed));
    }
    return files;
  }

  static void writePositions(Map<String, Long> positions, DataOutputView out) throws IOException {
    out.writeInt(positions.size());
    for (Map.Entry<String, Long> e : positions.entrySet()) {
      out.writeUTF(e.getKey());
      out.writeLong(e.getValue());
    }
  }

  static Map<String, Long> readPositions(DataInputView in) throws IOException {
    int count = in.readInt();
    Map<String, Long> positions = new HashMap<>(count * 2);
    for (int i = 0; i < count; i++) {
      positions.put(in.readUTF(), in.readLong());
    }
    return positions;
  }
}
