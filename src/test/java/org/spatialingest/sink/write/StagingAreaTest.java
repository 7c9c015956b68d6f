package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The staging-run format: it records its schema, and reads runs of other schemas by field id. */
class StagingAreaTest {
  private static final Schema OLD =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(3, "retired", Types.IntegerType.get()),
          Types.NestedField.required(2, "name", Types.StringType.get()));

  /** Reordered, one column retired, one added, one renamed (same id). */
  private static final Schema NEW =
      new Schema(
          Types.NestedField.required(2, "label", Types.StringType.get()),
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(4, "added", Types.DoubleType.get()));

  @Test
  void aRunReadsBackUnderTheSchemaItWasWrittenWith(@TempDir Path dir) throws Exception {
    StagingArea area = area(dir, OLD);
    String path = area.write(1, "tok", 0, buffer(OLD, 3), 0).path();
    List<RowData> rows = read(area, path, 3, OLD);
    assertThat(rows).hasSize(3);
    assertThat(rows.get(2).getLong(0)).isEqualTo(2);
    assertThat(rows.get(2).isNullAt(1)).isTrue();
    assertThat(rows.get(2).getString(2).toString()).isEqualTo("row-2");
  }

  @Test
  void aRunOfAnEarlierSchemaIsReadByFieldId(@TempDir Path dir) throws Exception {
    String path = area(dir, OLD).write(7, "tok", 0, buffer(OLD, 3), 0).path();
    List<RowData> rows = read(area(dir, NEW), path, 3, NEW);
    for (int i = 0; i < 3; i++) {
      assertThat(rows.get(i).getString(0).toString()).isEqualTo("row-" + i);
      assertThat(rows.get(i).getLong(1)).isEqualTo(i);
      assertThat(rows.get(i).isNullAt(2)).isTrue();
    }
  }

  @Test
  void aRunMissingARequiredColumnIsRefused(@TempDir Path dir) throws Exception {
    Schema needsMore =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.required(5, "must", Types.LongType.get()));
    String path = area(dir, OLD).write(7, "tok", 0, buffer(OLD, 1), 0).path();
    assertThatThrownBy(() -> read(area(dir, needsMore), path, 1, needsMore))
        .hasMessageContaining("must");
  }

  /** Version 2 (releases up to 99d1af5) has no schema: its rows are in the current layout. */
  @Test
  void aVersion2RunIsReadAsTheCurrentSchema(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("v2.rows");
    RowDataSerializer serializer = new RowDataSerializer(FlinkSchemaUtil.convert(NEW));
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(file))) {
      out.writeInt(0x53495257);
      out.writeInt(2);
      out.writeInt(1);
      DataOutputSerializer row = new DataOutputSerializer(64);
      serializer.serialize(GenericRowData.of(StringData.fromString("old"), 9L, 1.5), row);
      out.writeInt(row.length());
      out.write(row.getCopyOfBuffer());
    }
    List<RowData> rows = read(area(dir, NEW), file.toUri().toString(), 1, NEW);
    assertThat(rows.get(0).getString(0).toString()).isEqualTo("old");
    assertThat(rows.get(0).getLong(1)).isEqualTo(9);
    assertThat(rows.get(0).getDouble(2)).isEqualTo(1.5);
  }

  private static StagingArea area(Path dir, Schema schema) {
    return new StagingArea(
        new HadoopFileIO(new Configuration()),
        dir.toUri().toString(),
        new org.spatialingest.sink.core.SinkScope("uid", "sink", false),
        schema,
        new RowDataSerializer(FlinkSchemaUtil.convert(schema)));
  }

  private static PartitionBuffer buffer(Schema schema, int rows) throws Exception {
    RowDataSerializer serializer = new RowDataSerializer(FlinkSchemaUtil.convert(schema));
    PartitionBuffer buffer = new PartitionBuffer(null, 0);
    for (int i = 0; i < rows; i++) {
      DataOutputSerializer out = new DataOutputSerializer(64);
      serializer.serialize(
          GenericRowData.of((long) i, null, StringData.fromString("row-" + i)), out);
      buffer.add(out.getSharedBuffer(), out.length(), i, 1_000L, i);
    }
    return buffer;
  }

  private static List<RowData> read(StagingArea area, String path, int rows, Schema as)
      throws Exception {
    RowDataSerializer serializer = new RowDataSerializer(FlinkSchemaUtil.convert(as));
    List<RowData> read = new ArrayList<>();
    area.read(
        path,
        rows,
        bytes ->
            read.add(
                serializer.deserialize(
                    new BinaryRowData(as.columns().size()), new DataInputDeserializer(bytes))));
    return read;
  }
}
