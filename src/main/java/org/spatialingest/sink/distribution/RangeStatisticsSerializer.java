package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.spatialingest.sizing.SizingBounds;

/**
 * Versioned binary form of the {@link RangeCoordinator}'s checkpoint: the ratio, and per table its
 * quantiles and per partition its range count, rate, newest ingest time, quantiles and the rows
 * they stand for, and (version 2) its bound on ranges (a bounded input's). Version 1 reads with no
 * bound. The writer count and the bounds are not in it: a restore at another writer count recuts
 * the same quantiles for the new writers.
 */
final class RangeStatisticsSerializer implements SimpleVersionedSerializer<RangeStatistics> {
  /** Without a partition's bound on ranges; read only. */
  private static final int V1_NO_MAX_RANGES = 1;

  /** With a bounded input's bound on ranges per partition. */
  static final int V2_MAX_RANGES = 2;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V2_MAX_RANGES;

  private final SizingBounds bounds;
  private final int writers;
  private final int maxOpenPartitions;

  RangeStatisticsSerializer(SizingBounds bounds, int writers, int maxOpenPartitions) {
    this.bounds = bounds;
    this.writers = writers;
    this.maxOpenPartitions = maxOpenPartitions;
  }

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(RangeStatistics statistics) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(16 * 1024);
    out.writeDouble(statistics.encodedPerBufferedByte());
    out.writeInt(statistics.tables().size());
    for (RangeStatistics.TableStatistics table : statistics.tables()) {
      writeKeys(table.quantiles, out);
      out.writeDouble(table.weight);
      out.writeInt(table.partitions.size());
      for (Map.Entry<String, RangeStatistics.PartitionStatistics> e : table.partitions.entrySet()) {
        PartitionLoad load = e.getValue().load;
        out.writeUTF(e.getKey());
        out.writeInt(load.ranges);
        out.writeDouble(load.bytesPerSecond());
        out.writeLong(load.newestIngestMillis());
        writeKeys(e.getValue().quantiles, out);
        out.writeDouble(e.getValue().weight);
        long[] boundaries = e.getValue().boundaries;
        writeKeys(boundaries == null ? new long[0] : boundaries, out);
        out.writeInt(e.getValue().maxRanges);
      }
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public RangeStatistics deserialize(int version, byte[] serialized) throws IOException {
    if (version != V1_NO_MAX_RANGES && version != V2_MAX_RANGES) {
      throw new IOException("unknown RangeStatistics serializer version " + version);
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    RangeStatistics statistics =
        new RangeStatistics(bounds, writers, maxOpenPartitions, in.readDouble());
    int tableCount = in.readInt();
    for (int t = 0; t < tableCount; t++) {
      RangeStatistics.TableStatistics table = new RangeStatistics.TableStatistics();
      table.quantiles = readKeys(in);
      table.weight = in.readDouble();
      int n = in.readInt();
      for (int i = 0; i < n; i++) {
        String path = in.readUTF();
        PartitionLoad load = new PartitionLoad(in.readInt(), in.readDouble(), in.readLong());
        RangeStatistics.PartitionStatistics p =
            new RangeStatistics.PartitionStatistics(
                load, readKeys(in), in.readDouble(), readKeys(in));
        p.maxRanges = version == V2_MAX_RANGES ? in.readInt() : 0;
        table.partitions.put(path, p);
      }
      statistics.tables().add(table);
    }
    return statistics;
  }

  static void writeKeys(long[] keys, DataOutputView out) throws IOException {
    out.writeInt(keys.length);
    for (long k : keys) {
      out.writeLong(k);
    }
  }

  static long[] readKeys(DataInputView in) throws IOException {
    long[] keys = new long[in.readInt()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = in.readLong();
    }
    return keys;
  }
}
