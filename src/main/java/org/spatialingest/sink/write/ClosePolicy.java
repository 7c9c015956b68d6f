package org.spatialingest.sink.write;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sizing.SizingBounds;

/**
 * The one place that decides when a writer closes a file. The writer asks at every checkpoint
 * barrier, per open partition, and between barriers whether its in-flight bytes must be flushed.
 */
@Internal
public interface ClosePolicy extends Serializable {

  /**
   * @param bufferedBytes serialized bytes of the rows buffered for one partition
   * @param encodedPerBufferedByte learned ratio of Parquet bytes to buffered bytes
   * @param oldestAgeMillis now minus the ingest time of the oldest buffered row
   * @return why the buffer must be written and committed at this checkpoint, or {@code null} to
   *     keep it open
   */
  CloseReason atCheckpoint(long bufferedBytes, double encodedPerBufferedByte, long oldestAgeMillis);

  /** M, T, L and C this policy works with. */
  SizingBounds bounds();

  /**
   * Whether the writer's in-flight bytes reached the memory budget and a buffer must be flushed
   * now.
   */
  default boolean memoryFull(long inFlightBytes) {
    return bounds().memoryFull(inFlightBytes);
  }

  /**
   * Whether one partition's buffer would already encode to a full target file: it is written out at
   * once, between barriers, so files land near T however much arrives per checkpoint (it commits at
   * the next checkpoint).
   */
  default boolean targetReached(long bufferedBytes, double encodedPerBufferedByte) {
    return bufferedBytes >= bounds().bufferedBytesForTargetFile(encodedPerBufferedByte);
  }

  static ClosePolicy of(JobConfig config) {
    SizingBounds bounds = config.sizingBounds();
    return switch (config.closePolicy()) {
      case BOUNDED -> new Bounded(bounds);
      case EVERY_CHECKPOINT -> new EveryCheckpoint(bounds);
    };
  }

  /** Close when T, L or M binds, whichever comes first; otherwise carry rows across checkpoints. */
  record Bounded(SizingBounds bounds) implements ClosePolicy {
    @Override
    public CloseReason atCheckpoint(
        long bufferedBytes, double encodedPerBufferedByte, long oldestAgeMillis) {
      if (targetReached(bufferedBytes, encodedPerBufferedByte)) {
        return CloseReason.BYTES;
      }
      if (bounds.latencyDue(oldestAgeMillis)) {
        return CloseReason.LATENCY;
      }
      return null;
    }
  }

  /**
   * Iceberg's own sink behaviour, for comparison: every barrier closes every file; files also roll
   * at T (as Iceberg's target file size does) and memory still binds.
   */
  record EveryCheckpoint(SizingBounds bounds) implements ClosePolicy {
    @Override
    public CloseReason atCheckpoint(
        long bufferedBytes, double encodedPerBufferedByte, long oldestAgeMillis) {
      return CloseReason.CHECKPOINT;
    }
  }
}
