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
 *
 * <p>A buffer can be <em>parked</em> ({@link #park}): when more partitions are open than the writer
 * allows, its rows that are in staging runs leave memory; rows {@code [0, parkedRows)} then live
 * only in those runs, while its totals (bytes, ingest times, lowest source positions) stay. Rows
 * not yet staged, and rows that arrive later, are kept in memory after them; the parked rows are
 * read back ({@link #loadParked}) only to write the file.
 */
final class PartitionBuffer implements ClosePolicy.Candidate {
  /**
   * Per-row cost beyond its bytes: its position, length and sort-key slots (8 + 4 + 8, rounded up).
   */
  static final int ROW_OVERHEAD_BYTES = 24;

  private static final int FIRST_CHUNK_BYTES = 64 << 10;
  private static final int MAX_CHUNK_BYTES = 1 << 20;

  private final StructLike partition;
  private final int bufferId;
  private final List<byte[]> chunks = new ArrayList<>();

  /** the chunks as memory segments, so a row can be read where it lies */
  private final List<MemorySegment> segments = new ArrayList<>();

  private int chunkUsed;
  private long[] positions = new long[64]; // chunk index << 32 | offset in chunk
  private int[] lengths = new int[64];
  private long[] keys = new long[64];
  private int size;

  /** rows held in memory: {@code size - parkedRows} */
  private int storedRows;

  private long bytes;

  /** bytes of the rows held in memory (those from {@code parkedRows} on) */
  private long memoryBytes;

  /** rows [0, parkedRows) are only in staging runs, not in memory */
  private int parkedRows;

  /** out of the writer's open set: all its rows are in runs, none in memory */
  private boolean parked;

  private long minIngestMillis = Long.MAX_VALUE;
  private long maxIngestMillis = Long.MIN_VALUE;

  /** when the writer opened it (or re-read it on a restore), by its clock */
  private final long openedAtMillis = System.currentTimeMillis();

  private long lastWriteSequence;
  private final IngestTimeCounts ingestTimes = new IngestTimeCounts();
  private final SourceMarks lowestPositions = SourceMarks.lowest();

  /** rows [0, stagedRows) are in the staging runs listed in {@code stagedRuns} */
  private int stagedRows;

  private final List<String> stagedRuns = new ArrayList<>();
  private final List<Integer> runEnds = new ArrayList<>();

  /**
   * @param bufferId which of its partition's buffers this is ({@link
   *     org.spatialingest.sink.core.TableRouter#bufferId})
   */
  PartitionBuffer(StructLike partition, int bufferId) {
    this.partition = partition;
    this.bufferId = bufferId;
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
    long accounted = store(src, offset, length, hilbertKey);
    size++;
    bytes += accounted;
    minIngestMillis = Math.min(minIngestMillis, ingestMillis);
    maxIngestMillis = Math.max(maxIngestMillis, ingestMillis);
    ingestTimes.add(ingestMillis);
    lastWriteSequence = writeSequence;
    parked = false;
    return accounted;
  }

  /** Copies a row into memory after the rows held there; returns the bytes it accounts for. */
  private long store(byte[] src, int offset, int length, long hilbertKey) {
    int slot = storedRows;
    if (slot == positions.length) {
      positions = Arrays.copyOf(positions, slot * 2);
      lengths = Arrays.copyOf(lengths, slot * 2);
      keys = Arrays.copyOf(keys, slot * 2);
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
    positions[slot] = ((long) (chunks.size() - 1) << 32) | chunkUsed;
    lengths[slot] = length;
    keys[slot] = hilbertKey;
    chunkUsed += length;
    storedRows++;
    long accounted = BufferedRowSize.accountedBytes(length);
    memoryBytes += accounted;
    return accounted;
  }

  /**
   * Takes the buffer out of the open set and drops its staged rows from memory; rows not yet in a
   * run stay in memory until the next barrier stages them (then this is called again and frees
   * them), so parking writes no run of its own. Returns the bytes freed. Cost: a copy of the
   * unstaged rows.
   */
  long park() {
    int keepFrom = stagedRows - parkedRows; // first memory slot not yet staged
    long before = memoryBytes;
    List<byte[]> oldChunks = new ArrayList<>(chunks);
    long[] oldPositions = positions;
    int[] oldLengths = lengths;
    long[] oldKeys = keys;
    int oldRows = storedRows;
    clearMemory(Math.max(64, oldRows - keepFrom));
    for (int i = keepFrom; i < oldRows; i++) {
      store(
          oldChunks.get((int) (oldPositions[i] >>> 32)),
          (int) oldPositions[i],
          oldLengths[i],
          oldKeys[i]);
    }
    parkedRows = stagedRows;
    parked = true;
    return before - memoryBytes;
  }

  private void clearMemory(int capacity) {
    chunks.clear();
    segments.clear();
    chunkUsed = 0;
    positions = new long[capacity];
    lengths = new int[capacity];
    keys = new long[capacity];
    storedRows = 0;
    memoryBytes = 0;
  }

  /** Out of the writer's open set (rows arriving for it reopen it). */
  boolean isParked() {
    return parked;
  }

  /** Rows only in staging runs (the first ones); 0 unless the buffer was parked. */
  int parkedRows() {
    return parkedRows;
  }

  /** Bytes of the parked rows: what reading them back for the file costs in memory. */
  long parkedBytes() {
    return bytes - memoryBytes;
  }

  /** Bytes of the rows held in memory, as accounted against the memory budget. */
  @Override
  public long memoryBytes() {
    return memoryBytes;
  }

  /**
   * Puts the parked rows (read back from their runs, in order, with their sort keys) in memory
   * before the rows that arrived since, so the buffer can be written. Returns the bytes added to
   * memory.
   */
  long loadParked(List<byte[]> rows, long[] sortKeys) {
    if (rows.size() != parkedRows) {
      throw new IllegalStateException(
          "read back " + rows.size() + " parked rows, the buffer has " + parkedRows);
    }
    List<byte[]> oldChunks = new ArrayList<>(chunks);
    long[] oldPositions = positions;
    int[] oldLengths = lengths;
    long[] oldKeys = keys;
    int oldRows = storedRows;
    long before = memoryBytes;
    clearMemory(Math.max(64, size));
    for (int i = 0; i < rows.size(); i++) {
      byte[] row = rows.get(i);
      store(row, 0, row.length, sortKeys[i]);
    }
    for (int i = 0; i < oldRows; i++) {
      store(
          oldChunks.get((int) (oldPositions[i] >>> 32)),
          (int) oldPositions[i],
          oldLengths[i],
          oldKeys[i]);
    }
    parkedRows = 0;
    parked = false;
    return memoryBytes - before;
  }

  /** Slot of row {@code i} in memory. */
  private int slot(int i) {
    int slot = i - parkedRows;
    if (slot < 0) {
      throw new IllegalStateException("row " + i + " is parked: load the buffer first");
    }
    return slot;
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
    int slot = slot(i);
    int offset = (int) positions[slot];
    out.writeInt(lengths[slot]);
    out.write(chunks.get((int) (positions[slot] >>> 32)), offset, lengths[slot]);
  }

  /** A copy of row {@code i}'s bytes. */
  byte[] copyOfRow(int i) {
    int slot = slot(i);
    int offset = (int) positions[slot];
    return Arrays.copyOfRange(
        chunks.get((int) (positions[slot] >>> 32)), offset, offset + lengths[slot]);
  }

  /**
   * Points {@code row} at row {@code i}'s binary row where it lies in the buffer, without copying
   * (it stays valid while the buffer is).
   */
  void pointTo(int i, BinaryRowData row) {
    int slot = slot(i);
    int offset = (int) positions[slot] + Integer.BYTES; // after the serializer's length
    row.pointTo(
        segments.get((int) (positions[slot] >>> 32)), offset, lengths[slot] - Integer.BYTES);
  }

  /** Points {@code in} at row {@code i}, without copying. */
  void read(int i, DataInputDeserializer in) {
    int slot = slot(i);
    int offset = (int) positions[slot];
    in.setBuffer(chunks.get((int) (positions[slot] >>> 32)), offset, lengths[slot]);
  }

  /** Row {@code i}'s bytes as {@link #bytes()} counts them. */
  long rowBytes(int i) {
    return BufferedRowSize.accountedBytes(lengths[slot(i)]);
  }

  /** Row {@code i}'s sort key. */
  long key(int i) {
    return keys[slot(i)];
  }

  StructLike partition() {
    return partition;
  }

  int bufferId() {
    return bufferId;
  }

  int size() {
    return size;
  }

  @Override
  public long bytes() {
    return bytes;
  }

  /** When the writer opened the buffer, or re-read it from its runs on a restore. */
  long openedAtMillis() {
    return openedAtMillis;
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
    if (parkedRows > 0) {
      throw new IllegalStateException("a parked buffer is loaded before it is sorted");
    }
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
