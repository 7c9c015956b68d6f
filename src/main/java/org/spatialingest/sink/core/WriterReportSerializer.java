package org.spatialingest.sink.core;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned binary form of a {@link WriterReport} (writer → aggregator; not in state). Version 4:
 * positions as changes since the writer's previous report (a complete flag and the keys no longer
 * buffered after the buffered positions). Version 3 (every report complete) is still read, as a
 * complete report. Version 3 introduced the closed files as {@link ClosedFiles} (per group an
 * Iceberg manifest with the sink's fields, which the aggregator passes on without reading the
 * manifest); versions 1 and 2 never outlive a running job, so they are not read.
 */
@Internal
public final class WriterReportSerializer implements SimpleVersionedSerializer<WriterReport> {
  /** Buffered positions with a completeness flag and the keys no longer buffered. */
  static final int V4_BUFFERED_CHANGES = 4;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V4_BUFFERED_CHANGES;

  private static final int COMPLETE_POSITIONS = 3;

  /** Every version this build reads. */
  static final Set<Integer> READS = Set.of(COMPLETE_POSITIONS, V4_BUFFERED_CHANGES);

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterReport report) throws IOException {
    DataOutputSerializer out =
        new DataOutputSerializer(
            256 + 1024 * report.closed().size() + 32 * report.positionEntries());
    out.writeUTF(report.writerToken());
    report.closed().write(out);
    ClosedFileManifests.writePositions(report.receivedEnds(), out);
    out.writeBoolean(report.complete());
    ClosedFileManifests.writePositions(report.buffered(), out);
    out.writeInt(report.unbuffered().size());
    for (String key : report.unbuffered()) {
      out.writeUTF(key);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public WriterReport deserialize(int version, byte[] serialized) throws IOException {
    if (!READS.contains(version)) {
      throw new IOException(
          "unknown WriterReport serializer version "
              + version
              + " (this build reads "
              + READS
              + ")");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    String token = in.readUTF();
    ClosedFiles closed = ClosedFiles.read(in);
    var receivedEnds = ClosedFileManifests.readPositions(in);
    if (version == COMPLETE_POSITIONS) {
      return new WriterReport(
          token, closed, receivedEnds, ClosedFileManifests.readPositions(in), Set.of(), true);
    }
    boolean complete = in.readBoolean();
    var buffered = ClosedFileManifests.readPositions(in);
    int count = in.readInt();
    Set<String> unbuffered = new HashSet<>(count * 2);
    for (int i = 0; i < count; i++) {
      unbuffered.add(in.readUTF());
    }
    return new WriterReport(token, closed, receivedEnds, buffered, unbuffered, complete);
  }
}
