package org.spatialingest.sink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.SortOrderParser;

/**
 * Versioned binary form of a {@link FileBatch}, stored in the committer's checkpointed state. Version 1 carries the
 * partition specs and sort orders as Iceberg JSON (with their schema) so a batch can be read back without loading the
 * table, e.g. after the table's spec evolved.
 */
public final class FileBatchSerializer implements SimpleVersionedSerializer<FileBatch> {
  static final int VERSION = 1;

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(FileBatch batch) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256 + 512 * batch.files().size());
    out.writeLong(batch.checkpointId());
    out.writeLong(batch.bufferedBytes());
    out.writeLong(batch.minIngestMillis());
    out.writeLong(batch.maxIngestMillis());
    out.writeLong(batch.createdAtMillis());
    out.writeUTF(batch.lineage());
    out.writeInt(batch.specs().size());
    for (PartitionSpec spec : batch.specs().values()) {
      writeString(out, SchemaParser.toJson(spec.schema()));
      writeString(out, PartitionSpecParser.toJson(spec));
    }
    out.writeInt(batch.sortOrders().size());
    for (SortOrder order : batch.sortOrders().values()) {
      writeString(out, SchemaParser.toJson(order.schema()));
      writeString(out, SortOrderParser.toJson(order));
    }
    out.writeInt(batch.ingestSecondCounts().size());
    for (Map.Entry<Long, Long> e : batch.ingestSecondCounts().entrySet()) {
      out.writeLong(e.getKey());
      out.writeLong(e.getValue());
    }
    out.writeInt(batch.files().size());
    for (int i = 0; i < batch.files().size(); i++) {
      DataFile file = batch.files().get(i);
      out.writeUTF(batch.reasons().get(i).name());
      DataFileCodec.write(file, batch.specs().get(file.specId()), out);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public FileBatch deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException("unknown FileBatch serializer version " + version + " (this build reads " + VERSION + ")");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    long checkpointId = in.readLong();
    long bufferedBytes = in.readLong();
    long minIngest = in.readLong();
    long maxIngest = in.readLong();
    long createdAt = in.readLong();
    String lineage = in.readUTF();
    Map<Integer, PartitionSpec> specs = new HashMap<>();
    int specCount = in.readInt();
    for (int i = 0; i < specCount; i++) {
      Schema schema = SchemaParser.fromJson(readString(in));
      PartitionSpec spec = PartitionSpecParser.fromJson(schema, readString(in));
      specs.put(spec.specId(), spec);
    }
    Map<Integer, SortOrder> orders = new HashMap<>();
    int orderCount = in.readInt();
    for (int i = 0; i < orderCount; i++) {
      Schema schema = SchemaParser.fromJson(readString(in));
      SortOrder order = SortOrderParser.fromJson(schema, readString(in));
      orders.put(order.orderId(), order);
    }
    int seconds = in.readInt();
    Map<Long, Long> ingestSecondCounts = new HashMap<>();
    for (int i = 0; i < seconds; i++) {
      ingestSecondCounts.put(in.readLong(), in.readLong());
    }
    int fileCount = in.readInt();
    List<DataFile> files = new ArrayList<>(fileCount);
    List<CloseReason> reasons = new ArrayList<>(fileCount);
    for (int i = 0; i < fileCount; i++) {
      reasons.add(CloseReason.valueOf(in.readUTF()));
      files.add(DataFileCodec.read(in, specs, orders));
    }
    return new FileBatch(checkpointId, files, reasons, bufferedBytes, minIngest, maxIngest, createdAt, specs, orders,
        lineage, ingestSecondCounts);
  }

  static void writeString(DataOutputView out, String s) throws IOException {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  static String readString(DataInputView in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
