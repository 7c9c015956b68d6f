package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.ArrayList;
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
import org.apache.iceberg.parquet.Parquet;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.table.FileMetadata;
import org.spatialingest.table.PropertyColumns;
import org.spatialingest.table.TableLayout;

/**
 * Writes the buffers of one partition as one Parquet data file, or as several cut in key order,
 * rows in sort-key (Hilbert) order (the buffers' sorted rows merged: neighbouring key ranges packed
 * into one file; each row read where it lies in its buffer, not copied), through Iceberg's own
 * Parquet writer (so row groups, encodings, column metrics, bounds and split offsets are
 * Iceberg's), its values taken from the buffer's binary rows by {@link BinaryRowValueWriter}. A
 * table whose layout names {@link FileMetadata} (the telemetry table: GeoParquet's {@code geo})
 * gets it in each file's footer, from a first pass over the buffer.
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

  /**
   * Whether rows go through {@link BinaryRowValueWriter} (the write schema has only the types it
   * writes; files that add property columns take Iceberg's generic writer either way).
   */
  private boolean binaryRows;

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
    this.binaryRows = BinaryRowValueWriter.supports(writeSchema);
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
    return write(buffers, null);
  }

  /**
   * How far, as a share of a piece's bytes, a cut may move from its even position to a wider gap
   * between consecutive keys: rows of two clusters apart in Hilbert order then rarely share a file
   * (its bounds would cover the space between them). A piece holds 1/3 to 5/3 of bytes / files.
   */
  static final double CUT_SLACK = 1.0 / 3;

  /** One file of a cut: the data file and the buffered bytes of its rows. */
  record Written(DataFile file, long bufferedBytes) {}

  /**
   * Writes {@code buffers}, all of one partition, as {@code files} files cut in key order: their
   * rows merged by sort key, each file one contiguous span of that order, of about the same
   * buffered bytes (a cut sits at the widest key gap near its even position: {@link #cutPoints}). A
   * cut never falls between two equal keys, so the files' key spans are disjoint; with fewer
   * distinct keys than that, fewer files. Cost: as one file, plus the merged order kept as runs of
   * rows from one buffer (a few per buffer when the buffers are neighbouring ranges; at most one
   * per row when their keys interleave) and two more passes over the keys.
   */
  List<Written> write(List<PartitionBuffer> buffers, int files) throws IOException {
    if (files <= 1) {
      long bytes = 0;
      for (PartitionBuffer buffer : buffers) {
        bytes += buffer.bytes();
      }
      return List.of(new Written(write(buffers), bytes));
    }
    List<List<Run>> cut = cut(merged(buffers), files);
    List<Written> written = new ArrayList<>(cut.size());
    for (List<Run> file : cut) {
      long bytes = 0;
      for (Run run : file) {
        bytes += run.bytes;
      }
      written.add(new Written(write(buffers, file), bytes));
    }
    return written;
  }

  /** Rows {@code order[from, to)} of {@code buffer} (a sorted order of it), and their bytes. */
  private record Run(int[] order, PartitionBuffer buffer, int from, int to, long bytes) {}

  /** The buffers' rows merged by key (equal keys keep buffer order), as runs of one buffer each. */
  private static List<Run> merged(List<PartitionBuffer> buffers) throws IOException {
    List<Run> runs = new ArrayList<>();
    merge(
        buffers,
        (order, buffer, from, to) -> {
          long bytes = 0;
          for (int i = from; i < to; i++) {
            bytes += buffer.rowBytes(order[i]);
          }
          runs.add(new Run(order, buffer, from, to, bytes));
        });
    return runs;
  }

  /**
   * {@code runs} (the merged order) cut into at most {@code files} consecutive pieces at {@link
   * #cutPoints}.
   */
  private static List<List<Run>> cut(List<Run> runs, int files) {
    long[] cuts = cutPoints(runs, files);
    List<List<Run>> pieces = new ArrayList<>(files);
    List<Run> piece = new ArrayList<>();
    int next = 0;
    long ordinal = 0;
    for (Run run : runs) {
      int from = run.from;
      long bytes = 0;
      for (int i = run.from; i < run.to; i++, ordinal++) {
        bytes += run.buffer.rowBytes(run.order[i]);
        if (next < cuts.length && ordinal == cuts[next]) {
          piece.add(new Run(run.order, run.buffer, from, i + 1, bytes));
          pieces.add(piece);
          piece = new ArrayList<>();
          from = i + 1;
          bytes = 0;
          next++;
        }
      }
      if (from < run.to) {
        piece.add(new Run(run.order, run.buffer, from, run.to, bytes));
      }
    }
    if (!piece.isEmpty()) {
      pieces.add(piece);
    }
    return pieces;
  }

  /**
   * The rows (ordinals in the merged order) after which {@code runs} are cut into {@code files}
   * pieces, ascending: the k-th at the widest gap between consecutive keys among the rows whose
   * bytes so far lie within {@link #CUT_SLACK} of a piece's bytes of k/files of the total (the
   * first row after that with a gap if none has one). A cut never falls between equal keys.
   */
  private static long[] cutPoints(List<Run> runs, int files) {
    long total = 0;
    for (Run run : runs) {
      total += run.bytes;
    }
    double piece = total / (double) files;
    double slack = piece * CUT_SLACK;
    long[] cuts = new long[files - 1];
    int made = 0;
    long best = -1;
    double bestGap = 0;
    long sofar = 0;
    long ordinal = 0;
    for (int r = 0; r < runs.size() && made < cuts.length; r++) {
      Run run = runs.get(r);
      for (int i = run.from; i < run.to && made < cuts.length; i++, ordinal++) {
        sofar += run.buffer.rowBytes(run.order[i]);
        if (i + 1 == run.to && r + 1 == runs.size()) {
          break; // the last row ends the last piece
        }
        double even = piece * (made + 1);
        long key = run.buffer.key(run.order[i]);
        long nextKey = nextKey(runs, r, i);
        if (sofar >= even - slack && nextKey != key && (double) nextKey - key > bestGap) {
          best = ordinal;
          bestGap = (double) nextKey - key;
        }
        if (best >= 0 && sofar >= even + slack) {
          cuts[made++] = best;
          best = -1;
          bestGap = 0;
        }
      }
    }
    if (best >= 0 && made < cuts.length) {
      cuts[made++] = best; // the input ended inside the last window
    }
    return java.util.Arrays.copyOf(cuts, made);
  }

  /** The key of the row after row {@code i} of run {@code r} in the merged order (one exists). */
  private static long nextKey(List<Run> runs, int r, int i) {
    Run run = runs.get(r);
    if (i + 1 < run.to) {
      return run.buffer.key(run.order[i + 1]);
    }
    Run next = runs.get(r + 1);
    return next.buffer.key(next.order[next.from]);
  }

  /** Writes {@code buffers} (all their rows, or with {@code runs} those rows only) as one file. */
  private DataFile write(List<PartitionBuffer> buffers, List<Run> runs) throws IOException {
    StructLike partition = buffers.get(0).partition();
    PropertyColumns.FileScan scan =
        layout.propertyColumns() == null ? null : layout.propertyColumns().newScan();
    Map<String, String> footer = firstPass(buffers, runs, scan);
    // the columns this file needs are in the table before the file exists: one schema per file
    PropertyColumns.FileColumns columns =
        scan == null ? null : scan.commitColumns(table, writeSchema);
    if (columns != null && columns.addedColumns()) {
      SinkFaults.reach(SinkFaults.Point.AFTER_SCHEMA_CHANGE);
    }
    EncryptedOutputFile out = files.newOutputFile(spec, partition);
    DataWriter<RowData> writer =
        columns == null && binaryRows
            ? binaryRowWriter(out, footer, partition)
            : FormatModelRegistry.<RowData, Object>dataWriteBuilder(
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
    BinaryRowData row = new BinaryRowData(layout.fieldCount());
    RunConsumer write =
        (order, buffer, from, to) -> {
          for (int i = from; i < to; i++) {
            buffer.pointTo(order[i], row);
            writer.write(columns == null ? row : columns.expand(row));
          }
        };
    try (writer) {
      if (runs == null) {
        merge(buffers, write);
      } else {
        for (Run run : runs) {
          write.accept(run.order, run.buffer, run.from, run.to);
        }
      }
    }
    return writer.toDataFile();
  }

  /**
   * Iceberg's Parquet data writer with the same settings as the generic one, its rows written by
   * {@link BinaryRowValueWriter} straight from the buffer's memory.
   */
  private DataWriter<RowData> binaryRowWriter(
      EncryptedOutputFile out, Map<String, String> footer, StructLike partition)
      throws IOException {
    Parquet.DataWriteBuilder builder =
        Parquet.writeData(out)
            .setAll(writerProperties(table.properties(), rowGroupBytes))
            .schema(writeSchema)
            .createWriterFunc(type -> new BinaryRowValueWriter(writeSchema, layout.rowType(), type))
            .withSpec(spec)
            .withPartition(partition)
            .withSortOrder(sortOrder)
            .metricsConfig(metricsConfig)
            .withKeyMetadata(out.keyMetadata());
    footer.forEach(builder::meta);
    return builder.build();
  }

  /**
   * This writer with Iceberg's generic Flink row writer instead of {@link BinaryRowValueWriter}:
   * the reference the binary one is compared with, file for file (tests, benchmarks).
   */
  SortedFileWriter withGenericRows() {
    SortedFileWriter generic = new SortedFileWriter(table, layout, files, rowGroupBytes);
    generic.binaryRows = false;
    return generic;
  }

  /** Takes rows {@code [from, to)} of {@code order}, a sorted order of {@code buffer}'s rows. */
  private interface RunConsumer {
    void accept(int[] order, PartitionBuffer buffer, int from, int to) throws IOException;
  }

  /**
   * Each buffer's rows in key order, merged by key; equal keys keep buffer order; handed to {@code
   * to} as runs of one buffer. The buffers are neighbouring key ranges, so their keys rarely
   * interleave: after a scan of the buffers' heads finds the lowest, rows are taken from that
   * buffer for as long as they stay below every other head — one comparison per row instead of a
   * scan of all the packed buffers.
   */
  private static void merge(List<PartitionBuffer> buffers, RunConsumer to) throws IOException {
    int n = buffers.size();
    int[][] orders = new int[n][];
    int[] next = new int[n];
    for (int b = 0; b < n; b++) {
      orders[b] = buffers.get(b).sortedOrder();
    }
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
      int from = next[pick];
      int i = from + 1;
      while (i < order.length && buffer.key(order[i]) < otherLowest) {
        i++;
      }
      to.accept(order, buffer, from, i);
      next[pick] = i;
    }
  }

  /** The footer metadata from a pass over the rows, which also feeds {@code scan} (if any). */
  private Map<String, String> firstPass(
      List<PartitionBuffer> buffers, List<Run> runs, PropertyColumns.FileScan scan)
      throws IOException {
    FileMetadata metadata = layout.fileMetadata();
    if (metadata == null && scan == null) {
      return Map.of();
    }
    FileMetadata.Summary summary = metadata == null ? null : metadata.summary();
    BinaryRowData row = new BinaryRowData(layout.fieldCount());
    RunConsumer pass =
        (order, buffer, from, to) -> {
          for (int i = from; i < to; i++) {
            buffer.pointTo(order == null ? i : order[i], row);
            if (summary != null) {
              summary.add(row);
            }
            if (scan != null) {
              scan.add(row);
            }
          }
        };
    if (runs == null) {
      for (PartitionBuffer buffer : buffers) {
        pass.accept(null, buffer, 0, buffer.size());
      }
    } else {
      for (Run run : runs) {
        pass.accept(run.order, run.buffer, run.from, run.to);
      }
    }
    return summary == null ? Map.of() : summary.metadata();
  }
}
