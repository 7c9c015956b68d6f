package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.iceberg.shaded.org.apache.parquet.io.LocalInputFile;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.TelemetryParser;
import org.spatialingest.table.RejectsTable;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * A file written from the buffer's binary rows ({@link BinaryRowValueWriter}) is the file Iceberg's
 * generic Flink writer writes of the same rows: the same Parquet schema and footer metadata, the
 * same row groups, column chunk by column chunk (sizes, encodings, statistics), the same Iceberg
 * metrics in the data file, and the same records read back. For the telemetry table (points, lines,
 * polygons; strings short enough to sit inline in the row and long ones, multi-byte UTF-8, nulls),
 * the rejects table, and a schema of every type the writer takes, nulls included, with an optional
 * struct.
 */
class BinaryRowValueWriterTest {
  @TempDir Path dir;

  @Test
  void telemetryFilesAreTheFilesOfIcebergsWriter() throws Exception {
    Table table = table("telemetry", TelemetryTable.LAYOUT);
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84, JobConfig.fromMap(Map.of()));
    Random random = new Random(7);
    List<RowData> rows = new ArrayList<>();
    long day = 1_796_083_200_000L;
    for (int i = 0; i < 3_000; i++) {
      double x = random.nextGaussian() * 2 + 13;
      double y = random.nextGaussian() * 2 + 52;
      String geometry =
          switch (i % 3) {
            case 0 ->
                String.format(
                    Locale.ROOT, "{\"type\":\"Point\",\"coordinates\":[%.6f,%.6f]}", x, y);
            case 1 ->
                String.format(
                    Locale.ROOT,
                    "{\"type\":\"LineString\",\"coordinates\":[[%.6f,%.6f],[%.6f,%.6f]]}",
                    x,
                    y,
                    x + 0.01,
                    y + 0.02);
            default ->
                String.format(
                    Locale.ROOT,
                    "{\"type\":\"Polygon\",\"coordinates\":[[[%.4f,%.4f],[%.4f,%.4f],[%.4f,%.4f],[%.4f,%.4f]]]}",
                    x,
                    y,
                    x + 0.1,
                    y,
                    x,
                    y + 0.1,
                    x,
                    y);
          };
      String id = i % 4 == 0 ? "p" + i : "vehicle-" + i + "-ü-" + "x".repeat(i % 40);
      String properties =
          i % 5 == 0 ? "" : ",\"properties\":{\"v\":\"" + "é".repeat(i % 9) + "\",\"n\":" + i + "}";
      String json =
          "{\"id\":\""
              + id
              + "\",\"event_time\":"
              + (day + i * 1_000L)
              + ",\"geometry\":"
              + geometry
              + properties
              + "}";
      GenericRowData row = parser.parse(json.getBytes(StandardCharsets.UTF_8), day + i).row();
      if (i % 7 != 0) {
        row.setField(TelemetryTable.SOURCE, StringData.fromString("telemetry/" + (i % 3)));
        row.setField(TelemetryTable.SOURCE_OFFSET, (long) i);
      }
      rows.add(row);
    }
    assertSameFiles(table, TelemetryTable.LAYOUT, rows);
  }

  @Test
  void rejectsFilesAreTheFilesOfIcebergsWriter() throws Exception {
    Table table = table("rejects", RejectsTable.LAYOUT);
    List<RowData> rows = new ArrayList<>();
    long day = 1_796_083_200_000L;
    for (int i = 0; i < 1_000; i++) {
      GenericRowData r = new GenericRowData(RejectsTable.FIELD_COUNT);
      r.setField(
          RejectsTable.RAW, ("{\"bad\":" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8));
      r.setField(RejectsTable.RAW_SIZE, (long) (8 + i % 50));
      r.setField(RejectsTable.REASON, StringData.fromString(i % 2 == 0 ? "malformed_json" : "x"));
      r.setField(RejectsTable.MESSAGE, i % 3 == 0 ? null : StringData.fromString("at " + i));
      if (i % 2 == 0) {
        r.setField(RejectsTable.TOPIC, StringData.fromString("telemetry"));
        r.setField(RejectsTable.PARTITION, i % 4);
        r.setField(RejectsTable.OFFSET, (long) i);
      } else {
        r.setField(RejectsTable.FILE, StringData.fromString("file:/in/part-" + i + ".ndjson"));
        r.setField(RejectsTable.LINE, (long) i);
      }
      r.setField(RejectsTable.INGEST_TIME, TimestampData.fromEpochMillis(day + i));
      r.setField(RejectsTable.REJECTED_AT, TimestampData.fromEpochMillis(day + i, 123_456));
      rows.add(r);
    }
    assertSameFiles(table, RejectsTable.LAYOUT, rows);
  }

  private static final Schema EVERY_TYPE =
      new Schema(
          Types.NestedField.required(1, "ts", Types.TimestampType.withZone()),
          Types.NestedField.required(2, "key", Types.LongType.get()),
          Types.NestedField.optional(3, "d", Types.DoubleType.get()),
          Types.NestedField.optional(4, "f", Types.FloatType.get()),
          Types.NestedField.optional(5, "b", Types.BooleanType.get()),
          Types.NestedField.optional(6, "dt", Types.DateType.get()),
          Types.NestedField.optional(7, "local", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(8, "s", Types.StringType.get()),
          Types.NestedField.optional(9, "bin", Types.BinaryType.get()),
          Types.NestedField.optional(10, "i", Types.IntegerType.get()),
          Types.NestedField.optional(
              11,
              "st",
              Types.StructType.of(
                  Types.NestedField.optional(12, "x", Types.DoubleType.get()),
                  Types.NestedField.required(13, "y", Types.LongType.get()),
                  Types.NestedField.optional(14, "z", Types.StringType.get()))));

  @Test
  void everyTypeWithNullsIsWrittenAsIcebergsWriterWritesIt() throws Exception {
    TableLayout layout = new TableLayout(EVERY_TYPE, "ts", 0, "key");
    Table table = table("every_type", layout);
    Random random = new Random(11);
    List<RowData> rows = new ArrayList<>();
    long day = 1_796_083_200_000L;
    for (int i = 0; i < 2_000; i++) {
      GenericRowData r = new GenericRowData(11);
      r.setField(0, TimestampData.fromEpochMillis(day + i * 10L, i % 1000 * 1000));
      r.setField(1, random.nextLong());
      r.setField(2, nullOr(random, i % 97 == 0 ? Double.NaN : random.nextGaussian()));
      r.setField(3, nullOr(random, i % 89 == 0 ? Float.NaN : (float) random.nextGaussian()));
      r.setField(4, nullOr(random, random.nextBoolean()));
      r.setField(5, nullOr(random, 20_000 + random.nextInt(100)));
      r.setField(
          6, nullOr(random, TimestampData.fromEpochMillis(day - i * 1_000L, i % 1000 * 1000)));
      r.setField(7, nullOr(random, StringData.fromString("ß".repeat(random.nextInt(12)))));
      byte[] bytes = new byte[random.nextInt(20)];
      random.nextBytes(bytes);
      r.setField(8, nullOr(random, bytes));
      r.setField(9, nullOr(random, random.nextInt()));
      GenericRowData st = new GenericRowData(3);
      st.setField(0, nullOr(random, random.nextDouble()));
      st.setField(1, random.nextLong());
      st.setField(2, nullOr(random, StringData.fromString("z" + i)));
      r.setField(10, nullOr(random, st));
      rows.add(r);
    }
    assertSameFiles(table, layout, rows);
  }

  private static <T> T nullOr(Random random, T value) {
    return random.nextInt(6) == 0 ? null : value;
  }

  private Table table(String name, TableLayout layout) {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    return TableBootstrap.ensureTable(
        catalog, TableIdentifier.of("db", name), layout, JobConfig.TimePartitioning.DAY);
  }

  private static void assertSameFiles(Table table, TableLayout layout, List<RowData> rows)
      throws IOException {
    PartitionBuffers buffers = new PartitionBuffers(table, layout);
    BufferedRowSize rowSize = new BufferedRowSize(layout);
    for (RowData row : rows) {
      buffers.add(row, rowSize.serialize(row));
    }
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 0, 0)
            .format(FileFormat.PARQUET)
            .operationId(UUID.randomUUID().toString())
            .build();
    // small row groups: several per file, so row-group boundaries are compared too
    SortedFileWriter binary = new SortedFileWriter(table, layout, files, 64 * 1024);
    SortedFileWriter generic = binary.withGenericRows();
    Schema schema = layout.writeSchema(table.schema());
    assertThat(BinaryRowValueWriter.supports(schema)).isTrue();
    for (PartitionBuffer buffer : buffers.all()) {
      DataFile ours = binary.write(buffer);
      DataFile reference = generic.write(buffer);
      assertThat(ours.recordCount()).isEqualTo(reference.recordCount()).isPositive();
      assertThat(ours.columnSizes()).as("column sizes").isEqualTo(reference.columnSizes());
      assertThat(ours.valueCounts()).as("value counts").isEqualTo(reference.valueCounts());
      assertThat(ours.nullValueCounts()).as("null counts").isEqualTo(reference.nullValueCounts());
      assertThat(ours.nanValueCounts()).as("NaN counts").isEqualTo(reference.nanValueCounts());
      assertThat(ours.lowerBounds()).as("lower bounds").isEqualTo(reference.lowerBounds());
      assertThat(ours.upperBounds()).as("upper bounds").isEqualTo(reference.upperBounds());
      assertThat(ours.splitOffsets()).as("split offsets").isEqualTo(reference.splitOffsets());
      assertThat(ours.sortOrderId()).isEqualTo(reference.sortOrderId());
      assertThat(ours.fileSizeInBytes()).as("file size").isEqualTo(reference.fileSizeInBytes());

      ParquetMetadata a = footer(ours);
      ParquetMetadata b = footer(reference);
      assertThat(a.getFileMetaData().getSchema()).isEqualTo(b.getFileMetaData().getSchema());
      assertThat(a.getFileMetaData().getKeyValueMetaData())
          .isEqualTo(b.getFileMetaData().getKeyValueMetaData());
      assertThat(a.getBlocks()).hasSameSizeAs(b.getBlocks());
      for (int g = 0; g < a.getBlocks().size(); g++) {
        BlockMetaData x = a.getBlocks().get(g);
        BlockMetaData y = b.getBlocks().get(g);
        assertThat(x.getRowCount()).isEqualTo(y.getRowCount());
        for (int c = 0; c < x.getColumns().size(); c++) {
          ColumnChunkMetaData cx = x.getColumns().get(c);
          ColumnChunkMetaData cy = y.getColumns().get(c);
          assertThat(cx.getPath()).isEqualTo(cy.getPath());
          assertThat(cx.getEncodings())
              .as("%s encodings", cx.getPath())
              .isEqualTo(cy.getEncodings());
          assertThat(cx.getStatistics())
              .as("%s statistics", cx.getPath())
              .isEqualTo(cy.getStatistics());
          assertThat(cx.getValueCount()).isEqualTo(cy.getValueCount());
          assertThat(cx.getTotalSize()).as("%s bytes", cx.getPath()).isEqualTo(cy.getTotalSize());
        }
      }
      assertThat(read(table, schema, ours)).isEqualTo(read(table, schema, reference));
    }
  }

  private static ParquetMetadata footer(DataFile file) throws IOException {
    try (ParquetFileReader reader =
        ParquetFileReader.open(
            new LocalInputFile(Path.of(file.location().replaceFirst("^file:", ""))))) {
      return reader.getFooter();
    }
  }

  private static List<Record> read(Table table, Schema schema, DataFile file) throws IOException {
    List<Record> records = new ArrayList<>();
    try (CloseableIterable<Record> all =
        Parquet.read(table.io().newInputFile(file.location()))
            .project(schema)
            .createReaderFunc(type -> GenericParquetReaders.buildReader(schema, type))
            .build()) {
      for (Record r : all) {
        records.add(r.copy());
      }
    }
    return records;
  }
}
