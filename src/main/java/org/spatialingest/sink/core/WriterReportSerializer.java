package org.spatialingest.sink.core;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned binary form of a {@link WriterReport} (writer → aggregator; not in state). Version 2:
 * the closed files as Iceberg manifests ({@link ClosedFileManifests}). Version 1 had them in Java
 * serialization; it never outlives a running job, so it is not read.
 */
@Internal
public final class WriterReportSerializer implements SimpleVersionedSerializer<WriterReport> {
  static final int VERSION = 2;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterReport report) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256 + 1024 * report.closed().size());
    out.writeUTF(report.writerToken());
    ClosedFileManifests.writeFiles(report.closed(), out);
    ClosedFileManifests.writePositions(report.seen(), out);
    ClosedFileManifests.writePositions(report.buffered(), out);
    return out.getCopyOfBuffer();
  }

  @Override
  public WriterReport deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException("unknown WriterReport serializer version " + version);
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    return new WriterReport(
        in.readUTF(),
        ClosedFileManifests.readFiles(in),
        ClosedFileManifests.readPositions(in),
        ClosedFileManifests.readPositions(in));
  }
}
