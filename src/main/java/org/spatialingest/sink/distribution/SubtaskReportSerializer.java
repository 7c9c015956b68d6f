package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** Versioned binary form of a {@link SubtaskReport} (subtask → coordinator). Version 1. */
final class SubtaskReportSerializer implements SimpleVersionedSerializer<SubtaskReport> {
  /** The first and only version. */
  static final int V1_SAMPLES = 1;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V1_SAMPLES;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(SubtaskReport report) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(1024);
    out.writeLong(report.round());
    out.writeDouble(report.seconds());
    out.writeDouble(report.encodedPerBufferedByte());
    out.writeInt(report.tables().size());
    for (List<SubtaskReport.PartitionSample> table : report.tables()) {
      out.writeInt(table.size());
      for (SubtaskReport.PartitionSample p : table) {
        out.writeUTF(p.partition());
        out.writeLong(p.rows());
        out.writeLong(p.bytes());
        out.writeLong(p.newestIngestMillis());
        RangeStatisticsSerializer.writeKeys(p.keys(), out);
      }
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public SubtaskReport deserialize(int version, byte[] serialized) throws IOException {
    if (version != V1_SAMPLES) {
      throw new IOException("unknown SubtaskReport serializer version " + version);
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long round = in.readLong();
    double seconds = in.readDouble();
    double ratio = in.readDouble();
    int tableCount = in.readInt();
    List<List<SubtaskReport.PartitionSample>> tables = new ArrayList<>(tableCount);
    for (int t = 0; t < tableCount; t++) {
      int n = in.readInt();
      List<SubtaskReport.PartitionSample> table = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        table.add(
            new SubtaskReport.PartitionSample(
                in.readUTF(),
                in.readLong(),
                in.readLong(),
                in.readLong(),
                RangeStatisticsSerializer.readKeys(in)));
      }
      tables.add(table);
    }
    return new SubtaskReport(round, seconds, ratio, tables);
  }
}
