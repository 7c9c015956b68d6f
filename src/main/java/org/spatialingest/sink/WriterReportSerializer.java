package org.spatialingest.sink;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** Versioned binary form of a {@link WriterReport} (writer → aggregator). Version 1. */
final class WriterReportSerializer implements SimpleVersionedSerializer<WriterReport> {
  static final int VERSION = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(WriterReport report) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256 + 2048 * report.closed().size());
    out.writeUTF(report.writerToken());
    ClosedFileCodec.writeFiles(report.closed(), out);
    ClosedFileCodec.writePositions(report.seen(), out);
    ClosedFileCodec.writePositions(report.buffered(), out);
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
        ClosedFileCodec.readFiles(in),
        ClosedFileCodec.readPositions(in),
        ClosedFileCodec.readPositions(in));
  }
}
