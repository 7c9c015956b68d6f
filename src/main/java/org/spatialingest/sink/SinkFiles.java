package org.spatialingest.sink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.io.OutputFileFactory;
import org.spatialingest.TelemetryTable;

/**
 * Public entry point to the sink's own file writing, for tools and tests: rows are serialized and accounted as
 * {@link BufferingWriter} buffers them ({@link BufferedRowSize}), grouped per table partition into
 * {@link PartitionBuffer}s and written by {@link SortedFileWriter}, one Hilbert-sorted Parquet file per partition, with
 * the table's own properties. Nothing is committed; the caller appends the files if it wants them in the table.
 */
public final class SinkFiles {
  private SinkFiles() {}

  /**
   * What {@link #write} produced.
   *
   * @param files one data file per partition, in the order the partitions were first seen
   * @param rows rows written
   * @param bufferedBytes bytes the writer would have accounted for these rows against its memory budget
   * @param minIngestMillis oldest ingest time of the rows ({@code Long.MAX_VALUE} without rows)
   * @param maxIngestMillis newest ingest time of the rows ({@code Long.MIN_VALUE} without rows)
   */
  public record Written(
      List<DataFile> files, long rows, long bufferedBytes, long minIngestMillis, long maxIngestMillis) {
    public Written {
      files = List.copyOf(files);
    }

    /** Sum of the Parquet file sizes. */
    public long fileBytes() {
      return files.stream().mapToLong(DataFile::fileSizeInBytes).sum();
    }
  }

  /**
   * Writes {@code rows} (of {@link TelemetryTable#ROW_TYPE}) into new data files of {@code table}, as the sink's writer
   * would close them if all rows were buffered at once.
   */
  public static Written write(Table table, Iterable<? extends RowData> rows) throws IOException {
    TableLayout layout = TelemetryTable.LAYOUT;
    RowDataSerializer serializer = new RowDataSerializer(layout.rowType());
    BufferedRowSize rowSize = new BufferedRowSize(serializer);
    PartitionKey partitionKey = new PartitionKey(table.spec(), table.schema());
    RowDataWrapper wrapper = new RowDataWrapper(layout.rowType(), table.schema().asStruct());
    Map<StructLike, PartitionBuffer> buffers = new LinkedHashMap<>();
    long sequence = 0;
    long count = 0;
    long buffered = 0;
    long minIngest = Long.MAX_VALUE;
    long maxIngest = Long.MIN_VALUE;
    for (RowData row : rows) {
      partitionKey.partition(wrapper.wrap(row));
      PartitionBuffer buffer = buffers.get(partitionKey);
      if (buffer == null) {
        PartitionKey key = partitionKey.copy();
        buffer = new PartitionBuffer(key);
        buffers.put(key, buffer);
      }
      long ingestMillis = layout.ingestMillis(row);
      buffered += buffer.add(rowSize.serialize(row), row.getLong(TelemetryTable.HILBERT), ingestMillis, ++sequence);
      count++;
      minIngest = Math.min(minIngest, ingestMillis);
      maxIngest = Math.max(maxIngest, ingestMillis);
    }
    OutputFileFactory fileFactory = OutputFileFactory.builderFor(table, 0, 0)
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
    SortedFileWriter writer = new SortedFileWriter(table, layout, fileFactory, serializer);
    List<DataFile> files = new ArrayList<>(buffers.size());
    for (PartitionBuffer buffer : buffers.values()) {
      files.add(writer.write(buffer));
    }
    return new Written(files, count, buffered, minIngest, maxIngest);
  }
}
