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
  private final IngestTimeCounts ingestTimes = new IngestTimeCounts();

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
    ingestTimes.add(ingestMillis);
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

  IngestTimeCounts ingestTimes() {
    return ingestTimes;
  }

  long lastWriteSequence() {
    return lastWriteSequence;
  }

  byte[] row(int i) {
    return rows[i];
  }

  /** Row indexes in ascending sort-key order, stable for equal keys (a merge sort on primitive indexes). */
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
