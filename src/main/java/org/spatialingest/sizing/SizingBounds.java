package org.spatialingest.sizing;

import java.io.Serializable;
import java.time.Duration;

/**
 * The three bounds of a writer batch plus the checkpoint interval, and the arithmetic both the sink
 * and the {@code plan} command use to decide when a batch closes.
 *
 * <p>All sizes are bytes. The memory budget bounds the serialized bytes a writer subtask keeps in
 * flight; the target file size bounds the <em>encoded</em> (Parquet) size of a committed file; the
 * latency bound keeps every row committed within {@code maxLatency + checkpointInterval} of its
 * ingest time, because a batch can only be committed at a checkpoint.
 */
public record SizingBounds(
    long memoryBytes, long targetFileBytes, Duration maxLatency, Duration checkpointInterval)
    implements Serializable {

  public SizingBounds {
    if (memoryBytes <= 0) {
      throw new IllegalArgumentException("memory budget must be > 0 bytes, was " + memoryBytes);
    }
    if (targetFileBytes <= 0) {
      throw new IllegalArgumentException(
          "target file size must be > 0 bytes, was " + targetFileBytes);
    }
    if (maxLatency == null || maxLatency.isNegative() || maxLatency.isZero()) {
      throw new IllegalArgumentException("max latency must be > 0, was " + maxLatency);
    }
    if (checkpointInterval == null
        || checkpointInterval.isNegative()
        || checkpointInterval.isZero()) {
      throw new IllegalArgumentException(
          "checkpoint interval must be > 0, was " + checkpointInterval);
    }
  }

  /**
   * True when L &lt; C: every checkpoint will then close every batch, and the bound L + C is
   * dominated by C.
   */
  public boolean latencyShorterThanCheckpoint() {
    return maxLatency.compareTo(checkpointInterval) < 0;
  }

  /**
   * Buffered bytes that encode to about one target file, given the ratio encoded bytes / buffered
   * bytes learned from files already written (Parquet compresses, so the ratio is usually well
   * below 1).
   */
  public long bufferedBytesForTargetFile(double encodedPerBufferedByte) {
    double ratio = isKnownRatio(encodedPerBufferedByte) ? encodedPerBufferedByte : 1.0;
    return Math.max(1L, (long) Math.ceil(targetFileBytes / ratio));
  }

  /** Whether {@code encodedPerBufferedByte} was measured: 0 (or not finite) means not yet. */
  public static boolean isKnownRatio(double encodedPerBufferedByte) {
    return encodedPerBufferedByte > 0 && Double.isFinite(encodedPerBufferedByte);
  }

  /**
   * Whether a batch whose oldest row was ingested {@code oldestAgeMillis} ago must close at this
   * checkpoint: if it waited for the next one, that row would be older than L.
   */
  public boolean latencyDue(long oldestAgeMillis) {
    return oldestAgeMillis + checkpointInterval.toMillis() >= maxLatency.toMillis();
  }

  /**
   * Whether in-flight bytes have reached the memory budget M and must be flushed between barriers.
   */
  public boolean memoryFull(long inFlightBytes) {
    return inFlightBytes >= memoryBytes;
  }
}
