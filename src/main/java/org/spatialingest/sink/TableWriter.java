package org.spatialingest.sink;

import java.io.IOException;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.OutputFileFactory;
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
  private final TableLoader loader;
  private final SortedFileWriter fileWriter;

  /**
   * Assumed write cost until this writer has written a file: 100 ns per buffered byte (10 MB/s for
   * sort, Parquet encoding and zstd on a loaded core), deliberately pessimistic — the first latency
   * close must not be late.
   */
  private static final double DEFAULT_WRITE_NANOS_PER_BYTE = 100;

  /** Learned write cost, ns per buffered byte (sort + encode + upload). */
  private double writeNanosPerByte = DEFAULT_WRITE_NANOS_PER_BYTE;

  private long frozenBytes;

  private double ratioEncoded;
  private double ratioBuffered;

  /** ratioEncoded / ratioBuffered, kept current so the per-record target check is one comparison */
  private double encodedRatio = DEFAULT_ENCODED_RATIO;

  TableWriter(
      int index,
      TableLoader loader,
      TableLayout layout,
      String uid,
      String token,
      int subtask,
      int attempt,
      SourceMarks received) {
    this.index = index;
    this.layout = layout;
    this.loader = loader;
    loader.open();
    Table table = loader.loadTable();
    this.serializer = new RowDataSerializer(layout.rowType());
    this.rowSize = new BufferedRowSize(serializer);
    this.buffers = new PartitionBuffers(table, layout, received);
    this.staging = new StagingArea(table.io(), table.location(), uid);
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, subtask, attempt)
            .format(FileFormat.PARQUET)
            .operationId(SinkFileNames.operationId(uid, token))
            .build();
    // the encoder thread's own serializer: RowDataSerializer keeps reuse objects
    this.fileWriter =
        new SortedFileWriter(table, layout, files, (RowDataSerializer) serializer.duplicate());
    seedEncodedRatio(table.currentSnapshot());
  }

  /** Serializes and buffers a row; returns the buffer of its partition and key range. */
  PartitionBuffer add(RowData row, int range) throws IOException {
    int length = rowSize.serializeShared(row);
    return buffers.add(row, range, rowSize.sharedBuffer(), length);
  }

  double encodedRatio() {
    return encodedRatio;
  }

  /**
   * How long writing {@code buffer} is expected to take, from the files written so far: a latency
   * close must start that much earlier for its rows to be committed within L + C.
   */
  long expectedWriteMillis(PartitionBuffer buffer) {
    return (long) (writeNanosPerByte * buffer.bytes() / 1_000_000);
  }

  /**
   * Takes the buffers (of one partition) out of the open ones, to be written as one file: rows of
   * their partition and ranges that arrive from now on go to new buffers. Until {@link #written}
   * their bytes still count as in flight.
   */
  void freeze(List<PartitionBuffer> toWrite) {
    for (PartitionBuffer buffer : toWrite) {
      buffers.remove(buffer);
      frozenBytes += buffer.bytes();
    }
  }

  /**
   * Writes frozen buffers as one sorted data file. Runs on the encoder thread: touches only the
   * frozen buffers and the file writer, which no other thread uses.
   */
  DataFile encode(List<PartitionBuffer> frozen) throws IOException {
    return fileWriter.write(frozen);
  }

  /** The frozen buffers' file is written: learns the encoding ratio and write cost from it. */
  void written(List<PartitionBuffer> frozen, DataFile file, long writeNanos) {
    long bytes = 0;
    for (PartitionBuffer buffer : frozen) {
      bytes += buffer.bytes();
    }
    frozenBytes -= bytes;
    double perByte = writeNanos / (double) Math.max(1, bytes);
    writeNanosPerByte = writeNanosPerByte * RATIO_DECAY + perByte * (1 - RATIO_DECAY);
    ratioEncoded = ratioEncoded * RATIO_DECAY + file.fileSizeInBytes();
    ratioBuffered = ratioBuffered * RATIO_DECAY + bytes;
    encodedRatio = ratioEncoded / ratioBuffered;
  }

  /** Bytes of buffers frozen and not yet written. */
  long frozenBytes() {
    return frozenBytes;
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
