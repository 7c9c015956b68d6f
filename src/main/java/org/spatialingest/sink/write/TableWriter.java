package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.OutputFileFactory;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableLayout;

/**
 * One table's part of a writer subtask: its open partition buffers, the Parquet writer, its staging
 * area, and the learned ratio of Parquet bytes to buffered bytes (so files close near T).
 */
final class TableWriter implements AutoCloseable {
  /**
   * Until this writer has closed a file, assume Parquet output is as large as the buffer (files
   * undershoot T).
   */
  private static final double DEFAULT_ENCODED_RATIO = 1.0;

  /** Weight of history when learning the encoded/buffered ratio from each closed file. */
  private static final double RATIO_DECAY = 0.7;

  final int index;
  final TableLayout layout;
  final RowDataSerializer serializer;
  final BufferedRowSize rowSize;
  final PartitionBuffers buffers;
  final StagingArea staging;

  /** points at each row of a batch in turn while it is buffered */
  final BinaryRowData batchRow;

  private final TableLoader loader;
  private final PartitionSpec spec;
  private final SortedFileWriter fileWriter;

  /** Learned write cost, ns per buffered byte (sort + encode + upload). */
  private double writeNanosPerByte = ClosePolicy.DEFAULT_WRITE_NANOS_PER_BYTE;

  private double ratioEncoded;
  private double ratioBuffered;

  /** ratioEncoded / ratioBuffered, kept current so the per-record target check is one comparison */
  private double encodedRatio = DEFAULT_ENCODED_RATIO;

  TableWriter(
      int index,
      TableLoader loader,
      TableLayout layout,
      long rowGroupBytes,
      SinkScope scope,
      String token,
      int subtask,
      int attempt,
      SourceMarks highestReceived) {
    this.index = index;
    this.layout = layout;
    this.loader = loader;
    loader.open();
    Table table = loader.loadTable();
    this.spec = table.spec();
    this.serializer = new RowDataSerializer(layout.rowType());
    this.rowSize = new BufferedRowSize(serializer);
    this.batchRow = new BinaryRowData(layout.fieldCount());
    this.buffers = new PartitionBuffers(table, layout, highestReceived);
    this.staging =
        new StagingArea(
            table.io(), table.location(), scope, layout.writeSchema(table.schema()), serializer);
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, subtask, attempt)
            .format(FileFormat.PARQUET)
            .operationId(SinkFileNames.operationId(scope, token))
            .build();
    this.fileWriter = new SortedFileWriter(table, layout, files, rowGroupBytes);
    seedEncodedRatio(table.currentSnapshot());
  }

  /** Serializes and buffers a row; returns the buffer of its partition and buffer id. */
  PartitionBuffer add(RowData row, int bufferId) throws IOException {
    int length = rowSize.serializeShared(row);
    return buffers.add(row, bufferId, rowSize.sharedBuffer(), length);
  }

  /** The partition spec this writer's files are written with. */
  PartitionSpec spec() {
    return spec;
  }

  double encodedRatio() {
    return encodedRatio;
  }

  /** Measured write cost (sort, encode, upload), ns per buffered byte; the close policy uses it. */
  double writeNanosPerByte() {
    return writeNanosPerByte;
  }

  /**
   * Writes the buffers (of one partition) as one sorted data file, forgets them, and learns the
   * encoding ratio from the result.
   */
  DataFile write(List<PartitionBuffer> toWrite) throws IOException {
    long start = System.nanoTime();
    DataFile file = fileWriter.write(toWrite);
    long bytes = 0;
    for (PartitionBuffer buffer : toWrite) {
      bytes += buffer.bytes();
      buffers.remove(buffer);
    }
    double perByte = (System.nanoTime() - start) / (double) Math.max(1, bytes);
    writeNanosPerByte = writeNanosPerByte * RATIO_DECAY + perByte * (1 - RATIO_DECAY);
    ratioEncoded = ratioEncoded * RATIO_DECAY + file.fileSizeInBytes();
    ratioBuffered = ratioBuffered * RATIO_DECAY + bytes;
    encodedRatio = ratioEncoded / ratioBuffered;
    return file;
  }

  /**
   * Start from the ratio the table's last commit of this sink measured, so even the first files
   * land near T.
   */
  private void seedEncodedRatio(Snapshot snapshot) {
    if (snapshot == null) {
      return;
    }
    double ratio = SnapshotSummaryKeys.encodedPerBufferedByte(snapshot.summary());
    if (ratio > 0) {
      ratioBuffered = Long.parseLong(snapshot.summary().get(SnapshotSummaryKeys.BUFFERED_BYTES));
      ratioEncoded = ratioBuffered * ratio;
      encodedRatio = ratio;
    }
  }

  @Override
  public void close() throws IOException {
    loader.close();
  }
}
