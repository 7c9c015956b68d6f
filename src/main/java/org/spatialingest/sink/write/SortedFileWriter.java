package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.formats.FormatModelRegistry;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.table.FileMetadata;
import org.spatialingest.table.PropertyColumns;
import org.spatialingest.table.TableLayout;

/**
 * Writes the buffers of one partition as one Parquet data file, rows in sort-key (Hilbert) order
 * (the buffers' sorted rows merged: neighbouring key ranges packed into one file; each row read
 * where it lies in its buffer, not copied), through Iceberg's own Flink Parquet writer (so column
 * metrics, bounds and split offsets are Iceberg's). A table whose layout names {@link FileMetadata}
 * (the telemetry table: GeoParquet's {@code geo}) gets it in each file's footer, from a first pass
 * over the buffer.
 */
final class SortedFileWriter {
  private final Table table;
  private final TableLayout layout;
  private final PartitionSpec spec;
  private final SortOrder sortOrder;
  private final MetricsConfig metricsConfig;
  private final Schema writeSchema;
  private final OutputFiles files;
  private final long rowGroupBytes;

  /** Where each file goes: the table's {@link OutputFileFactory}, or memory to measure a sample. */
  interface OutputFiles {
    EncryptedOutputFile newOutputFile(PartitionSpec spec, StructLike partition);
  }

  /**
   * @param rowGroupBytes the Parquet row group size our files get unless the table sets {@code
   *     write.parquet.row-group-size-bytes}; 0: Parquet's (Iceberg's) default
   */
  SortedFileWriter(Table table, TableLayout layout, OutputFileFactory files, long rowGroupBytes) {
    this(table, layout, files::newOutputFile, rowGroupBytes);
  }

  SortedFileWriter(Table table, TableLayout layout, OutputFiles files, long rowGroupBytes) {
    this.table = table;
    this.layout = layout;
    this.spec = table.spec();
    this.sortOrder = table.sortOrder();
    this.metricsConfig = MetricsConfig.forTable(table);
    this.writeSchema = layout.writeSchema(table.schema());
    this.files = files;
    this.rowGroupBytes = rowGroupBytes;
  }

  SortedFileWriter(Table table, TableLayout layout, OutputFileFactory files) {
    this(table, layout, files, 0);
  }

  /**
   * Parquet writer properties our files add to the table's; a table property of the same name wins.
   * Dictionary encoding is off: the telemetry columns that hold most of the bytes (WKB geometry,
   * bbox doubles, Hilbert key, timestamps, offsets) are unique per row, so their dictionaries only
   * cost hashing and then fall back to plain (24-26 % of the task threads' samples on points; off,
   * 6 % less CPU per record: see benchmarks.md). Iceberg 1.11's Parquet writer has one switch for
   * all columns ({@code parquet.enable.dictionary}); without it the files came out 0.5-2 % smaller,
   * not larger.
   */
  static final Map<String, String> WRITER_DEFAULTS = Map.of("parquet.enable.dictionary", "false");

  /** The table's properties over {@link #WRITER_DEFAULTS}. */
  static Map<String, String> writerProperties(Map<String, String> tableProperties) {
    return writerProperties(tableProperties, 0);
  }

  /**
   * The table's properties over {@link #WRITER_DEFAULTS} and row groups of {@code rowGroupBytes}
   * (0: not set). Several row groups per file give a filter several sets of statistics to skip by:
   * the rows are sorted by Hilbert key, so each row group covers a compact area (benchmarks.md,
   * "Row groups per file").
   */
  static Map<String, String> writerProperties(
      Map<String, String> tableProperties, long rowGroupBytes) {
    Map<String, String> p = new HashMap<>(WRITER_DEFAULTS);
    if (rowGroupBytes > 0) {
      p.put(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, Long.toString(rowGroupBytes));
    }
    p.putAll(tableProperties);
    return p;
  }

  PartitionSpec spec() {
    return spec;
  }

  SortOrder sortOrder() {
    return sortOrder;
  }

  DataFile write(PartitionBuffer buffer) throws IOException {
    return write(List.of(buffer));
  }

  /** Writes {@code buffers}, all of one partition, as one file. */
  DataFile write(List<PartitionBuffer> buffers) throws IOException {
    StructLike partition = buffers.get(0).partition();
    PropertyColumns.FileScan scan =
        layout.propertyColumns() == null ? null : layout.propertyColumns().newScan();
    Map<String, String> footer = firstPass(buffers, scan);
    // the columns this file needs are in the table before the file exists: one schema per file
    PropertyColumns.FileColumns columns =
        scan == null ? null : scan.commitColumns(table, writeSchema);
    if (columns != null && columns.addedColumns()) {
      SinkFaults.reach(SinkFaults.Point.AFTER_SCHEMA_CHANGE);
    }
    EncryptedOutputFile out = files.newOutputFile(spec, partition);
    DataWriter<RowData> writer =
        FormatModelRegistry.<RowData, Object>dataWriteBuilder(
                FileFormat.PARQUET, RowData.class, out)
            .setAll(writerProperties(table.properties(), rowGroupBytes))
            .meta(footer)
            .schema(columns == null ? writeSchema : columns.schema())
            .engineSchema(columns == null ? layout.rowType() : columns.rowType())
            .spec(spec)
            .partition(partition)
            .sortOrder(sortOrder)
            .metricsConfig(metricsConfig)
            .build();
    try (writer) {
      writeMerged(buffers, writer, columns);
    }
    return writer.toDataFile();
  }

  /**
   * Each buffer's rows in key order, merged by key; equal keys keep buffer order. The buffers are
   * neighbouring key ranges, so their keys rarely interleave: after a scan of the buffers' heads
   * finds the lowest, rows are taken from that buffer for as long as they stay below every other
   * head — one comparison per row instead of a scan of all the packed buffers.
   */
  private void writeMerged(
      List<PartitionBuffer> buffers,
      DataWriter<RowData> writer,
      PropertyColumns.FileColumns columns)
      throws IOException {
    int n = buffers.size();
    int[][] orders = new int[n][];
    int[] next = new int[n];
    for (int b = 0; b < n; b++) {
      orders[b] = buffers.get(b).sortedOrder();
    }
    BinaryRowData row = new BinaryRowData(layout.fieldCount());
    while (true) {
      int pick = -1;
      long lowest = 0;
      long otherLowest = Long.MAX_VALUE; // the lowest head of the other buffers
      for (int b = 0; b < n; b++) {
        if (next[b] < orders[b].length) {
          long key = buffers.get(b).key(orders[b][next[b]]);
          if (pick < 0 || key < lowest) {
            if (pick >= 0) {
              otherLowest = Math.min(otherLowest, lowest);
            }
            pick = b;
            lowest = key;
          } else {
            otherLowest = Math.min(otherLowest, key);
          }
        }
      }
      if (pick < 0) {
        return;
      }
      PartitionBuffer buffer = buffers.get(pick);
      int[] order = orders[pick];
      int i = next[pick];
      do {
        buffer.pointTo(order[i++], row);
        writer.write(columns == null ? row : columns.expand(row));
      } while (i < order.length && buffer.key(order[i]) < otherLowest);
      next[pick] = i;
    }
  }

  /** The footer metadata from a pass over the rows, which also feeds {@code scan} (if any). */
  private Map<String, String> firstPass(
      List<PartitionBuffer> buffers, PropertyColumns.FileScan scan) throws IOException {
    FileMetadata metadata = layout.fileMetadata();
    if (metadata == null && scan == null) {
      return Map.of();
    }
    FileMetadata.Summary summary = metadata == null ? null : metadata.summary();
    BinaryRowData row = new BinaryRowData(layout.fieldCount());
    for (PartitionBuffer buffer : buffers) {
      for (int index = 0; index < buffer.size(); index++) {
        buffer.pointTo(index, row);
        if (summary != null) {
          summary.add(row);
        }
        if (scan != null) {
          scan.add(row);
        }
      }
    }
    return summary == null ? Map.of() : summary.metadata();
  }
}
