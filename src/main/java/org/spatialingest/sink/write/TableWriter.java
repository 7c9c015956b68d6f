package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.OutputFileFactory;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.table.PropertyColumns;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableLayout;

/**
 * One table's part of a writer subtask: its open partition buffers, the Parquet writer, its staging
 * area, and the learned ratio of Parquet bytes to buffered bytes (so files close near T). It owns
 * how rows of its table are serialized, staged and read back; the {@link BufferingWriter} decides
 * what to buffer, stage, park and close, across tables, through the methods here and the open
 * buffers ({@link #buffers()}).
 */
final class TableWriter implements AutoCloseable {
  /**
   * Until this writer has closed a file, assume Parquet output is as large as the buffer (files
   * undershoot T).
   */
  private static final double DEFAULT_ENCODED_RATIO = 1.0;

  /** Weight of history when learning the encoded/buffered ratio from each closed file. */
  private static final double RATIO_DECAY = 0.7;

  private final int index;
  private final TableLayout layout;
  private final RowDataSerializer serializer;
  private final BufferedRowSize rowSize;
  private final PartitionBuffers buffers;
  private final StagingArea staging;

  /** points at each row of a batch in turn while it is buffered */
  private final BinaryRowData batchRow;

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
      SourceMarks highestReceived,
      double seedRatio) {
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
    seedEncodedRatio(table.currentSnapshot(), seedRatio);
  }

  /** The table's index among the sink's tables. */
  int index() {
    return index;
  }

  /** The open (and parked) buffers of this table on this writer. */
  PartitionBuffers buffers() {
    return buffers;
  }

  /** The property columns of the table's layout; null if it has none. */
  PropertyColumns propertyColumns() {
    return layout.propertyColumns();
  }

  /** Serializes and buffers a row; returns the buffer of its partition and buffer id. */
  PartitionBuffer add(RowData row, int bufferId) throws IOException {
    int length = rowSize.serializeShared(row);
    return buffers.add(row, bufferId, rowSize.sharedBuffer(), length);
  }

  /**
   * Buffers one row of {@code batch}, the {@code length} bytes at {@code offset} of its rows
   * (length prefix included) as they are, read in place through {@code segment} (which wraps them).
   * With {@code samePartition} the partition of the batch's previous row is taken, not computed.
   */
  PartitionBuffer addFromBatch(
      RowBatch batch, MemorySegment segment, int offset, int length, boolean samePartition) {
    batchRow.pointTo(segment, offset + Integer.BYTES, length - Integer.BYTES);
    return buffers.add(batchRow, batch.bufferId(), batch.rows(), offset, length, samePartition);
  }

  /** Buffers a row read back from a staging run (its serialized bytes, as buffered). */
  PartitionBuffer addSerialized(int bufferId, DataInputDeserializer in, byte[] bytes)
      throws IOException {
    in.setBuffer(bytes);
    RowData row = serializer.deserialize(new BinaryRowData(layout.fieldCount()), in);
    return buffers.add(row, bufferId, bytes, bytes.length);
  }

  /**
   * Writes the rows of {@code buffer} that are in no run yet to a new staging run and records it on
   * the buffer; returns the bytes written. Cost: one object written, of those rows.
   */
  long stageNewRows(long checkpointId, String token, int sequence, PartitionBuffer buffer)
      throws IOException {
    StagingArea.Written run =
        staging.write(checkpointId, token, sequence, buffer, buffer.stagedRows());
    buffer.staged(run.path());
    return run.bytes();
  }

  /**
   * Buffers the rows of a run from a restored state again, recorded as staged in that run; a parked
   * run's rows leave memory again (only their totals stay). Cost: one read of the run.
   */
  void restore(WriterState.StagedRun run, DataInputDeserializer in) throws IOException {
    List<PartitionBuffer> touched = new ArrayList<>(1);
    staging.read(
        run.path(), run.rows(), bytes -> touched.add(addSerialized(run.bufferId(), in, bytes)));
    if (!touched.isEmpty()) {
      // a run holds rows of one partition buffer: they all landed in the same buffer again
      PartitionBuffer buffer = touched.get(touched.size() - 1);
      buffer.staged(run.path());
      if (run.parked()) {
        buffers.park(buffer);
      }
    }
  }

  /**
   * Reads the parked rows of {@code buffer} back from its runs into memory; returns the bytes
   * loaded (0 if none were parked). Cost: one read per parked run.
   */
  long loadParked(PartitionBuffer buffer) throws IOException {
    if (buffer.parkedRows() == 0) {
      return 0;
    }
    List<byte[]> rows = new ArrayList<>(buffer.parkedRows());
    List<String> paths = buffer.stagedRuns();
    int previous = 0;
    for (int i = 0; i < paths.size() && buffer.runEnd(i) <= buffer.parkedRows(); i++) {
      staging.read(paths.get(i), buffer.runEnd(i) - previous, rows::add);
      previous = buffer.runEnd(i);
    }
    long parkedBytes = buffer.parkedBytes();
    buffers.loadParked(buffer, rows);
    return parkedBytes;
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
   * Writes the buffers (of one partition, in key order) as {@code files} sorted data files cut in
   * key order ({@link SortedFileWriter#write(List, int)}), forgets them, and learns the write cost
   * from the close and the encoding ratio from each file {@code policy} says is near enough to T
   * ({@link ClosePolicy#learnsRatioFrom}: a small file's fixed Parquet bytes would raise it).
   */
  List<SortedFileWriter.Written> write(List<PartitionBuffer> toWrite, int files, ClosePolicy policy)
      throws IOException {
    long start = System.nanoTime();
    List<SortedFileWriter.Written> written = fileWriter.write(toWrite, files);
    long bytes = 0;
    for (PartitionBuffer buffer : toWrite) {
      bytes += buffer.bytes();
      buffers.remove(buffer);
    }
    double perByte = (System.nanoTime() - start) / (double) Math.max(1, bytes);
    writeNanosPerByte = writeNanosPerByte * RATIO_DECAY + perByte * (1 - RATIO_DECAY);
    double ratio = encodedRatio;
    for (SortedFileWriter.Written file : written) {
      // each file is judged by the ratio before the close: its files are alike
      if (policy.learnsRatioFrom(file.bufferedBytes(), ratio)) {
        ratioEncoded = ratioEncoded * RATIO_DECAY + file.file().fileSizeInBytes();
        ratioBuffered = ratioBuffered * RATIO_DECAY + file.bufferedBytes();
        encodedRatio = ratioEncoded / ratioBuffered;
      }
    }
    return written;
  }

  /**
   * Start from the ratio the table's last commit of this sink measured, else from {@code seed} (a
   * sample's, 0: none, then 1), so even the first files land near T. A seed weighs as one buffered
   * byte: the writer's own first file replaces it.
   */
  private void seedEncodedRatio(Snapshot snapshot, double seed) {
    double ratio =
        snapshot == null ? 0 : SnapshotSummaryKeys.encodedPerBufferedByte(snapshot.summary());
    if (ratio > 0) {
      ratioBuffered = Long.parseLong(snapshot.summary().get(SnapshotSummaryKeys.BUFFERED_BYTES));
      ratioEncoded = ratioBuffered * ratio;
      encodedRatio = ratio;
    } else if (seed > 0) {
      ratioBuffered = 1;
      ratioEncoded = seed;
      encodedRatio = seed;
    }
  }

  @Override
  public void close() throws IOException {
    loader.close();
  }
}
