package org.spatialingest.sink.write;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.options.SinkOptions;

/**
 * Says, at most once per {@link #WINDOW_MILLIS} per writer, when files keep closing by L because
 * their rows were already old when they reached the writer. L counts from the Kafka record
 * timestamp, so such rows close at the next barrier and files hold about one checkpoint interval of
 * rows instead of growing towards T. Two causes look alike here: the job is behind Kafka (it
 * catches up; the source's {@code pendingRecords} is high), or the record timestamps are not
 * ingress times (a producer sets {@code CreateTime} to the event time; {@code pendingRecords} near
 * 0), which only the topic can fix ({@code message.timestamp.type=LogAppendTime}).
 *
 * <p>A close counts as late when its oldest row was already L/2 old when its buffer opened (a lower
 * bound of its age on arrival). One late barrier is a restart catching up; the warning waits for
 * {@link #BARRIERS_WORTH_A_WARNING} barriers with late closes spanning at least 2 L. Cost: a
 * subtraction per latency close and two counters per barrier.
 */
final class LateArrivalWarning {
  private static final Logger LOG = LoggerFactory.getLogger(LateArrivalWarning.class);

  /** Barriers with late closes, within one window, that are worth a warning. */
  static final int BARRIERS_WORTH_A_WARNING = 10;

  static final long WINDOW_MILLIS = 600_000;

  private final long latencyMillis;
  private int closesSinceBarrier;
  private long windowStart = Long.MIN_VALUE;
  private long firstLateBarrier;
  private int lateBarriers;
  private long lateCloses;
  private boolean warned;

  /** {@code latencyMillis}: L */
  LateArrivalWarning(long latencyMillis) {
    this.latencyMillis = latencyMillis;
  }

  /**
   * Counts a latency close whose oldest row was {@code ageWhenOpenedMillis} old when its buffer
   * opened; true if its rows arrived late.
   */
  boolean latencyClose(long ageWhenOpenedMillis) {
    boolean late = ageWhenOpenedMillis >= latencyMillis / 2;
    if (late) {
      closesSinceBarrier++;
    }
    return late;
  }

  /**
   * A barrier: counts the late closes since the previous one (none: not a late barrier); true when
   * it logged the warning.
   */
  boolean barrier(long nowMillis) {
    int lateCloses = closesSinceBarrier;
    closesSinceBarrier = 0;
    if (windowStart == Long.MIN_VALUE || nowMillis - windowStart >= WINDOW_MILLIS) {
      windowStart = nowMillis;
      lateBarriers = 0;
      this.lateCloses = 0;
      warned = false;
    }
    if (lateCloses == 0) {
      return false;
    }
    if (lateBarriers == 0) {
      firstLateBarrier = nowMillis;
    }
    lateBarriers++;
    this.lateCloses += lateCloses;
    if (warned
        || lateBarriers < BARRIERS_WORTH_A_WARNING
        || nowMillis - firstLateBarrier < 2 * latencyMillis) {
      return false;
    }
    warned = true;
    LOG.warn(
        "{} files closed by {} ({} ms) at {} barriers within {} s held rows that were already at"
            + " least half of it old when they reached this writer, so files stay small. Either"
            + " the job is behind Kafka (the source's pendingRecords is high: it catches up), or"
            + " the topic's record timestamps are not ingress times (pendingRecords near 0: a"
            + " producer sets CreateTime to the event time); then set the topic's"
            + " message.timestamp.type=LogAppendTime (freshness.md, 'Producers that stamp the"
            + " event time').",
        this.lateCloses,
        SinkOptions.MAX_LATENCY.key(),
        latencyMillis,
        lateBarriers,
        (nowMillis - windowStart) / 1000);
    return true;
  }
}
