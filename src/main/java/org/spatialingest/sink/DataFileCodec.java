package org.spatialingest.sink;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Writes and reads the fields of an Iceberg {@link DataFile} that an append needs: location, format, partition,
 * size, row count, column metrics, split offsets and sort order id. Partition values use Iceberg's single-value
 * binary form per partition field, so the encoding follows the Iceberg spec rather than a class layout. Specs and
 * sort orders travel once per batch (see {@link FileBatchSerializer}).
 */
final class DataFileCodec {
  private DataFileCodec() {}

  static void write(DataFile file, PartitionSpec spec, DataOutputView out) throws IOException {
    out.writeUTF(file.location());
    out.writeUTF(file.format().name());
    out.writeInt(file.specId());
    List<Types.NestedField> partitionFields = spec.partitionType().fields();
    out.writeInt(partitionFields.size());
    for (int i = 0; i < partitionFields.size(); i++) {
      Object value = file.partition().get(i, Object.class);
      writeBytes(out, value == null ? null : Conversions.toByteBuffer(partitionFields.get(i).type(), value));
    }
    out.writeLong(file.fileSizeInBytes());
    out.writeLong(file.recordCount());
    writeLongMap(out, file.columnSizes());
    writeLongMap(out, file.valueCounts());
    writeLongMap(out, file.nullValueCounts());
    writeLongMap(out, file.nanValueCounts());
    writeBufferMap(out, file.lowerBounds());
    writeBufferMap(out, file.upperBounds());
    List<Long> splits = file.splitOffsets();
    out.writeInt(splits == null ? -1 : splits.size());
    if (splits != null) {
      for (long s : splits) {
        out.writeLong(s);
      }
    }
    out.writeInt(file.sortOrderId() == null ? -1 : file.sortOrderId());
  }

  static DataFile read(DataInputView in, Map<Integer, PartitionSpec> specsById, Map<Integer, SortOrder> sortOrdersById)
      throws IOException {
    String location = in.readUTF();
    FileFormat format = FileFormat.valueOf(in.readUTF());
    int specId = in.readInt();
    PartitionSpec spec = specsById.get(specId);
    if (spec == null) {
      throw new IOException("no partition spec " + specId + " for data file " + location);
    }
    int partitionFields = in.readInt();
    PartitionData partition = new PartitionData(spec.partitionType());
    for (int i = 0; i < partitionFields; i++) {
      ByteBuffer bytes = readBytes(in);
      Type type = spec.partitionType().fields().get(i).type();
      partition.set(i, bytes == null ? null : Conversions.fromByteBuffer(type, bytes));
    }
    long size = in.readLong();
    long records = in.readLong();
    Map<Integer, Long> columnSizes = readLongMap(in);
    Map<Integer, Long> valueCounts = readLongMap(in);
    Map<Integer, Long> nullCounts = readLongMap(in);
    Map<Integer, Long> nanCounts = readLongMap(in);
    Map<Integer, ByteBuffer> lower = readBufferMap(in);
    Map<Integer, ByteBuffer> upper = readBufferMap(in);
    int splitCount = in.readInt();
    List<Long> splits = null;
    if (splitCount >= 0) {
      Long[] s = new Long[splitCount];
      for (int i = 0; i < splitCount; i++) {
        s[i] = in.readLong();
      }
      splits = List.of(s);
    }
    int sortOrderId = in.readInt();
    DataFiles.Builder b = DataFiles.builder(spec)
        .withPath(location)
        .withFormat(format)
        .withFileSizeInBytes(size)
        .withMetrics(new Metrics(records, columnSizes, valueCounts, nullCounts, nanCounts, lower, upper));
    if (spec.isPartitioned()) {
      b.withPartition(partition);
    }
    if (splits != null) {
      b.withSplitOffsets(splits);
    }
    if (sortOrderId >= 0) {
      SortOrder order = sortOrdersById.get(sortOrderId);
      if (order == null) {
        throw new IOException("no sort order " + sortOrderId + " for data file " + location);
      }
      b.withSortOrder(order);
    }
    return b.build();
  }

  private static void writeBytes(DataOutputView out, ByteBuffer buf) throws IOException {
    if (buf == null) {
      out.writeInt(-1);
      return;
    }
    ByteBuffer dup = buf.duplicate();
    byte[] bytes = new byte[dup.remaining()];
    dup.get(bytes);
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  private static ByteBuffer readBytes(DataInputView in) throws IOException {
    int len = in.readInt();
    if (len < 0) {
      return null;
    }
    byte[] bytes = new byte[len];
    in.readFully(bytes);
    return ByteBuffer.wrap(bytes);
  }

  private static void writeLongMap(DataOutputView out, Map<Integer, Long> map) throws IOException {
    out.writeInt(map == null ? -1 : map.size());
    if (map != null) {
      for (Map.Entry<Integer, Long> e : map.entrySet()) {
        out.writeInt(e.getKey());
        out.writeLong(e.getValue());
      }
    }
  }

  private static Map<Integer, Long> readLongMap(DataInputView in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    Map<Integer, Long> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(in.readInt(), in.readLong());
    }
    return map;
  }

  private static void writeBufferMap(DataOutputView out, Map<Integer, ByteBuffer> map) throws IOException {
    out.writeInt(map == null ? -1 : map.size());
    if (map != null) {
      for (Map.Entry<Integer, ByteBuffer> e : map.entrySet()) {
        out.writeInt(e.getKey());
        writeBytes(out, e.getValue());
      }
    }
  }

  private static Map<Integer, ByteBuffer> readBufferMap(DataInputView in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    Map<Integer, ByteBuffer> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(in.readInt(), readBytes(in));
    }
    return map;
  }
}
