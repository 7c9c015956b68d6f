package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/** Versioned binary form of {@link GlobalRanges} (coordinator → subtasks). Version 1. */
final class GlobalRangesSerializer implements SimpleVersionedSerializer<GlobalRanges> {
  /** The first and only version. */
  static final int V1_BOUNDARIES = 1;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V1_BOUNDARIES;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(GlobalRanges ranges) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(16 * 1024);
    out.writeLong(ranges.round());
    out.writeInt(ranges.finest());
    out.writeInt(ranges.tables().size());
    for (GlobalRanges.TableRanges table : ranges.tables()) {
      RangeStatisticsSerializer.writeKeys(table.quantiles(), out);
      out.writeInt(table.partitions().size());
      for (Map.Entry<String, GlobalRanges.PartitionRanges> e : table.partitions().entrySet()) {
        out.writeUTF(e.getKey());
        out.writeInt(e.getValue().ranges());
        RangeStatisticsSerializer.writeKeys(e.getValue().boundaries(), out);
      }
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public GlobalRanges deserialize(int version, byte[] serialized) throws IOException {
    if (version != V1_BOUNDARIES) {
      throw new IOException("unknown GlobalRanges serializer version " + version);
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long round = in.readLong();
    int finest = in.readInt();
    int tableCount = in.readInt();
    List<GlobalRanges.TableRanges> tables = new ArrayList<>(tableCount);
    for (int t = 0; t < tableCount; t++) {
      long[] quantiles = RangeStatisticsSerializer.readKeys(in);
      int n = in.readInt();
      Map<String, GlobalRanges.PartitionRanges> partitions = new HashMap<>();
      for (int i = 0; i < n; i++) {
        String path = in.readUTF();
        int count = in.readInt();
        partitions.put(
            path, new GlobalRanges.PartitionRanges(count, RangeStatisticsSerializer.readKeys(in)));
      }
      tables.add(new GlobalRanges.TableRanges(quantiles, partitions));
    }
    return new GlobalRanges(round, finest, tables);
  }
}
