package org.spatialingest.sink;

import java.util.Arrays;
import org.apache.iceberg.StructLike;

/**
 * The rows one writer holds for one partition, as serialized bytes, with what the close decision needs: their
 * measured size and the oldest ingest time. Rows are kept with their Hilbert key so the file can be written sorted.
 */
final class PartitionBuffer {
  /** Per-row heap overhead of the byte[] header and the two array slots, counted so heap stays within M. */
  static final int ROW_OVERHEAD_BYTES = 16 + 8 + 8;

  private final StructLike partition;
  private byte[][] rows = new byte[64][];
  private long[] keys = new long[64];
  private int size;
  private long bytes;
  private long minIngestMillis = Long.MAX_VALUE;
  private long maxIngestMillis = Long.MIN_VALUE;
  private long lastWriteSequence;

  PartitionBuffer(StructLike partition) {
    this.partition = partition;
  }

  /** Adds a serialized row; returns the bytes it accounts for. */
  long add(byte[] row, long hilbertKey, long ingestMillis, long writeSequence) {
    if (size == rows.length) {
      rows = Arrays.copyOf(rows, size * 2);
      keys = Arrays.copyOf(keys, size * 2);
    }
    rows[size] = row;
    keys[size] = hilbertKey;
    size++;
    long accounted = BufferedRowSize.accountedBytes(row);
    bytes += accounted;
    minIngestMillis = Math.min(minIngestMillis, ingestMillis);
    maxIngestMillis = Math.max(maxIngestMillis, ingestMillis);
    lastWriteSequence = writeSequence;
    return accounted;
  }

  StructLike partition() {
    return partition;
  }

  int size() {
    return size;
  }

  long bytes() {
    return bytes;
  }

  long minIngestMillis() {
    return minIngestMillis;
  }

  long maxIngestMillis() {
    return maxIngestMillis;
  }

  long lastWriteSequence() {
    return lastWriteSequence;
  }

  byte[] row(int i) {
    return rows[i];
  }

  /** Row indexes in ascending Hilbert-key order (stable for equal keys). */
  int[] sortedOrder() {
    Integer[] boxed = new Integer[size];
    for (int i = 0; i < size; i++) {
      boxed[i] = i;
    }
    Arrays.sort(boxed, (a, b) -> Long.compare(keys[a], keys[b]));
    int[] order = new int[size];
    for (int i = 0; i < size; i++) {
      order[i] = boxed[i];
    }
    return order;
  }
}
