package org.spatialingest.sink.write;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.inmemory.InMemoryOutputFile;
import org.apache.iceberg.io.OutputFileFactory;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * Public entry point to the sink's own file writing, for tools and tests: rows are serialized and
 * accounted as {@link BufferingWriter} buffers them ({@link BufferedRowSize}), grouped per table
 * partition into {@link PartitionBuffer}s and written by {@link SortedFileWriter}, one
 * Hilbert-sorted Parquet file per partition, with the table's own properties. Nothing is committed;
 * the caller appends the files if it wants them in the table.
 */
@Internal
public final class SinkFiles {
  private SinkFiles() {}

  /**
   * What {@link #write} produced.
   *
   * @param files one data file per partition
   * @param rows rows written
   * @param bufferedBytes bytes the writer would have accounted for these rows against its memory
   *     budget
   * @param minIngestMillis oldest ingest time of the rows ({@code Long.MAX_VALUE} without rows)
   * @param maxIngestMillis newest ingest time of the rows ({@code Long.MIN_VALUE} without rows)
   */
  public record Written(
      List<DataFile> files,
      long rows,
      long bufferedBytes,
      long minIngestMillis,
      long maxIngestMillis) {
    public Written {
      files = List.copyOf(files);
    }

    /** Sum of the Parquet file sizes. */
    public long fileBytes() {
      return files.stream().mapToLong(DataFile::fileSizeInBytes).sum();
    }
  }

  /**
   * Writes {@code rows} (of {@link TelemetryTable#ROW_TYPE}) into new data files of {@code table},
   * as the sink's writer would close them if all rows were buffered at once.
   */
  public static Written write(Table table, Iterable<? extends RowData> rows) throws IOException {
    return write(table, TelemetryTable.LAYOUT, rows);
  }

  /**
   * Writes {@code rows} (of {@code layout}'s row type) into new data files of {@code table}, as the
   * sink's writer would close them if all rows were buffered at once.
   */
  public static Written write(Table table, TableLayout layout, Iterable<? extends RowData> rows)
      throws IOException {
    RowDataSerializer serializer = new RowDataSerializer(layout.rowType());
    BufferedRowSize rowSize = new BufferedRowSize(serializer);
    PartitionBuffers buffers = new PartitionBuffers(table, layout);
    long minIngest = Long.MAX_VALUE;
    long maxIngest = Long.MIN_VALUE;
    for (RowData row : rows) {
      PartitionBuffer buffer = buffers.add(row, rowSize.serialize(row));
      minIngest = Math.min(minIngest, buffer.minIngestMillis());
      maxIngest = Math.max(maxIngest, buffer.maxIngestMillis());
    }
    long count = buffers.rows();
    long buffered = buffers.bytes();
    OutputFileFactory fileFactory =
        OutputFileFactory.builderFor(table, 0, 0)
            .format(FileFormat.PARQUET)
            .operationId(UUID.randomUUID().toString())
            .build();
    SortedFileWriter writer = new SortedFileWriter(table, layout, fileFactory);
    List<DataFile> files = new ArrayList<>(buffers.size());
    for (PartitionBuffer buffer : buffers.all()) {
      files.add(writer.write(buffer));
    }
    return new Written(files, count, buffered, minIngest, maxIngest);
  }

  /**
   * Parquet bytes per buffered byte of {@code rows} (of {@code layout}'s row type) written as the
   * sink's writer writes them (one Hilbert-sorted file per partition of {@code table}, with its
   * properties), in memory: nothing reaches the table's storage. 0 without rows, and 0 for a layout
   * with {@code auto} property columns (writing a file adds its columns to the table: not before
   * the job runs). What a writer of a table without commits starts from instead of 1, so its first
   * file is not a fraction of T.
   *
   * <p>Cost: the rows serialized and encoded once (a few milliseconds for a sample of 4,096
   * points).
   */
  public static double encodedPerBufferedByte(
      Table table, TableLayout layout, Iterable<? extends RowData> rows) throws IOException {
    if (layout.propertyColumns() != null) {
      return 0;
    }
    RowDataSerializer serializer = new RowDataSerializer(layout.rowType());
    BufferedRowSize rowSize = new BufferedRowSize(serializer);
    PartitionBuffers buffers = new PartitionBuffers(table, layout);
    for (RowData row : rows) {
      buffers.add(row, rowSize.serialize(row));
    }
    long buffered = buffers.bytes();
    if (buffered == 0) {
      return 0;
    }
    SortedFileWriter writer =
        new SortedFileWriter(
            table,
            layout,
            (spec, partition) ->
                EncryptedFiles.plainAsEncryptedOutput(
                    new InMemoryOutputFile("memory:/" + UUID.randomUUID() + ".parquet")),
            0);
    long encoded = 0;
    for (PartitionBuffer buffer : buffers.all()) {
      encoded += writer.write(buffer).fileSizeInBytes();
    }
    return encoded / (double) buffered;
  }

  /** Rows in a staging run, as its header states; for tests and tools watching the staging area. */
  public static int stagedRows(InputStream run) throws IOException {
    return StagingArea.rowCount(new DataInputStream(run));
  }
}
