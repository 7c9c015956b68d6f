package org.spatialingest.sink.core;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Versioned binary form of a {@link WriterReport} (writer → aggregator; not in state). Version 3:
 * the closed files as {@link ClosedFiles} (per group an Iceberg manifest with the sink's fields,
 * which the aggregator passes on without reading the manifest). Version 2 had the manifests in
 * another layout, version 1 the files in Java serialization; they never outlive a running job, so
 * they are not read.
 */
@Internal
public final class WriterReportSerializer implements SimpleVersionedSerializer<WriterReport> {
  static final int VERSION = 3;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterReport report) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256 + 1024 * report.closed().size());
    out.writeUTF(report.writerToken());
    report.closed().write(out);
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
        ClosedFiles.read(in),
        ClosedFileManifests.readPositions(in),
        ClosedFileManifests.readPositions(in));
  }
}
