package org.spatialingest.sink.write;

import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.iceberg.StructLike;

/**
 * The rows one writer holds for one partition, as serialized bytes, with what the close decision
 * needs: their measured size and the oldest ingest time. Rows are kept with their Hilbert key so
 * the file can be written sorted.
 *
 * <p>Rows are appended to a few large byte chunks (an arena) rather than kept as one array each:
 * millions of small arrays would each cost a header and keep the garbage collector busy, and they
 * would survive long enough to be promoted. A row never spans two chunks; a row larger than a chunk
 * gets a chunk of its own.
 */
final class PartitionBuffer implements ClosePolicy.Candidate {
  /**
   * Per-row cost beyond its bytes: its position, length and sort-key slots (8 + 4 + 8, rounded up).
   */
  static final int ROW_OVERHEAD_BYTES = 24;

  private static final int FIRST_CHUNK_BYTES = 64 << 10;
  private static final int MAX_CHUNK_BYTES = 1 << 20;

  private final StructLike partition;
  private final int range;
  private final List<byte[]> chunks = new ArrayList<>();

  /** the chunks as memory segments, so a row can be read where it lies */
  private final List<MemorySegment> segments = new ArrayList<>();

  private int chunkUsed;
  private long[] positions = new long[64]; // chunk index << 32 | offset in chunk
  private int[] lengths = new int[64];
  private long[] keys = new long[64];
  private int size;
  private long bytes;
  private long minIngestMillis = Long.MAX_VALUE;
  private long maxIngestMillis = Long.MIN_VALUE;
  private long lastWriteSequence;
  private final IngestTimeCounts ingestTimes = new IngestTimeCounts();
  private final SourceMarks lowestPositions = SourceMarks.lowest();

  /** rows [0, stagedRows) are in the staging runs listed in {@code stagedRuns} */
  private int stagedRows;

  private final List<String> stagedRuns = new ArrayList<>();
  private final List<Integer> runEnds = new ArrayList<>();

  /**
   * @param range the key range of the partition this buffer holds (0 when rows are not distributed
   *     by range)
   */
  PartitionBuffer(StructLike partition, int range) {
    this.partition = partition;
    this.range = range;
  }

  /** As {@link #add(byte[], int, int, long, long, long)} from the start of {@code src}. */
  long add(byte[] src, int length, long hilbertKey, long ingestMillis, long writeSequence) {
    return add(src, 0, length, hilbertKey, ingestMillis, writeSequence);
  }

  /**
   * Copies a serialized row ({@code length} bytes of {@code src} from {@code offset}) into the
   * buffer; returns the bytes it accounts for.
   */
  long add(
      byte[] src, int offset, int length, long hilbertKey, long ingestMillis, long writeSequence) {
    if (size == positions.length) {
      positions = Arrays.copyOf(positions, size * 2);
      lengths = Arrays.copyOf(lengths, size * 2);
      keys = Arrays.copyOf(keys, size * 2);
    }
    byte[] chunk = chunks.isEmpty() ? null : chunks.get(chunks.size() - 1);
    if (chunk == null || chunk.length - chunkUsed < length) {
      int next = chunk == null ? FIRST_CHUNK_BYTES : Math.min(MAX_CHUNK_BYTES, chunk.length * 2);
      chunk = new byte[Math.max(next, length)];
      chunks.add(chunk);
      segments.add(MemorySegmentFactory.wrap(chunk));
      chunkUsed = 0;
    }
    System.arraycopy(src, offset, chunk, chunkUsed, length);
    positions[size] = ((long) (chunks.size() - 1) << 32) | chunkUsed;
    lengths[size] = length;
    keys[size] = hilbertKey;
    chunkUsed += length;
    size++;
    long accounted = BufferedRowSize.accountedBytes(length);
    bytes += accounted;
    minIngestMillis = Math.min(minIngestMillis, ingestMillis);
    maxIngestMillis = Math.max(maxIngestMillis, ingestMillis);
    ingestTimes.add(ingestMillis);
    lastWriteSequence = writeSequence;
    return accounted;
  }

  /**
   * Remembers a buffered row's source position (the lowest per source is what the positions need).
   */
  void markSource(StringData key, long position) {
    lowestPositions.mark(key, position);
  }

  SourceMarks lowestPositions() {
    return lowestPositions;
  }

  /** Rows from this index on are not yet in a staging run. */
  int stagedRows() {
    return stagedRows;
  }

  /** Rows up to the current size are now in {@code run} (as well as the runs before it). */
  void staged(String run) {
    stagedRows = size;
    stagedRuns.add(run);
    runEnds.add(size);
  }

  /** One past the last row of staging run {@code i}. */
  int runEnd(int i) {
    return runEnds.get(i);
  }

  /** The staging runs that hold this buffer's rows, oldest first. */
  List<String> stagedRuns() {
    return List.copyOf(stagedRuns);
  }

  /** Writes row {@code i}'s length and bytes to {@code out} (a staging run). */
  void writeRow(int i, DataOutput out) throws IOException {
    int offset = (int) positions[i];
    out.writeInt(lengths[i]);
    out.write(chunks.get((int) (positions[i] >>> 32)), offset, lengths[i]);
  }

  /** A copy of row {@code i}'s bytes. */
  byte[] copyOfRow(int i) {
    int offset = (int) positions[i];
    return Arrays.copyOfRange(chunks.get((int) (positions[i] >>> 32)), offset, offset + lengths[i]);
  }

  /**
   * Points {@code row} at row {@code i}'s binary row where it lies in the buffer, without copying
   * (it stays valid while the buffer is).
   */
  void pointTo(int i, BinaryRowData row) {
    int offset = (int) positions[i] + Integer.BYTES; // after the serializer's length
    row.pointTo(segments.get((int) (positions[i] >>> 32)), offset, lengths[i] - Integer.BYTES);
  }

  /** Points {@code in} at row {@code i}, without copying. */
  void read(int i, DataInputDeserializer in) {
    int offset = (int) positions[i];
    in.setBuffer(chunks.get((int) (positions[i] >>> 32)), offset, lengths[i]);
  }

  /** Row {@code i}'s sort key. */
  long key(int i) {
    return keys[i];
  }

  StructLike partition() {
    return partition;
  }

  int range() {
    return range;
  }

  int size() {
    return size;
  }

  @Override
  public long bytes() {
    return bytes;
  }

  @Override
  public long minIngestMillis() {
    return minIngestMillis;
  }

  long maxIngestMillis() {
    return maxIngestMillis;
  }

  IngestTimeCounts ingestTimes() {
    return ingestTimes;
  }

  long lastWriteSequence() {
    return lastWriteSequence;
  }

  /**
   * Row indexes in ascending sort-key order, stable for equal keys (a merge sort on primitive
   * indexes).
   */
  int[] sortedOrder() {
    int[] order = new int[size];
    for (int i = 0; i < size; i++) {
      order[i] = i;
    }
    int[] scratch = new int[size];
    for (int width = 1; width < size; width *= 2) {
      for (int lo = 0; lo < size - width; lo += 2 * width) {
        merge(order, scratch, lo, lo + width, Math.min(lo + 2 * width, size));
      }
    }
    return order;
  }

  private void merge(int[] order, int[] scratch, int lo, int mid, int hi) {
    if (keys[order[mid - 1]] <= keys[order[mid]]) {
      return; // already in order: the common case for rows that arrive spatially clustered
    }
    System.arraycopy(order, lo, scratch, lo, hi - lo);
    int i = lo;
    int j = mid;
    for (int k = lo; k < hi; k++) {
      if (i < mid && (j >= hi || keys[scratch[i]] <= keys[scratch[j]])) {
        order[k] = scratch[i++];
      } else {
        order[k] = scratch[j++];
      }
    }
  }
}
