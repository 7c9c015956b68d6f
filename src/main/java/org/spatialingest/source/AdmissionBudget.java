package org.spatialingest.source;

import java.util.function.LongSupplier;

/**
 * Two token buckets — records per second and bytes per second — that decide when the next record
 * may be admitted. Either cap may be off (0). When both are set, the one that runs dry first binds.
 *
 * <p>A <em>soft</em> maximum: a record is admitted whenever both buckets hold a positive balance,
 * even if it costs more than that balance (a record larger than a whole interval's budget must
 * still pass, or the stream would stall); the bucket then goes negative and the next record waits
 * until it has refilled. Such overshoots are counted. Each bucket holds at most one second of
 * budget, so an idle source cannot save up a burst larger than that.
 */
final class AdmissionBudget {
  /** Which cap is holding records back right now. */
  enum Cap {
    NONE,
    RECORDS,
    BYTES
  }

  private final Bucket records;
  private final Bucket bytes;
  private final LongSupplier nanoClock;
  private long overshoots;

  AdmissionBudget(double maxRecordsPerSecond, double maxBytesPerSecond, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    long now = nanoClock.getAsLong();
    this.records = maxRecordsPerSecond > 0 ? new Bucket(maxRecordsPerSecond, now) : null;
    this.bytes = maxBytesPerSecond > 0 ? new Bucket(maxBytesPerSecond, now) : null;
  }

  boolean enabled() {
    return records != null || bytes != null;
  }

  /** Nanoseconds until the next record may be admitted; 0 when it may be admitted now. */
  long waitNanos() {
    long now = nanoClock.getAsLong();
    return Math.max(wait(records, now), wait(bytes, now));
  }

  /** The cap that holds records back now, or {@link Cap#NONE}. */
  Cap binding() {
    long now = nanoClock.getAsLong();
    long r = wait(records, now);
    long b = wait(bytes, now);
    if (r == 0 && b == 0) {
      return Cap.NONE;
    }
    return r >= b ? Cap.RECORDS : Cap.BYTES;
  }

  /** Charges what was just emitted. */
  void charge(long recordCount, long byteCount) {
    if (recordCount == 0 && byteCount == 0) {
      return;
    }
    long now = nanoClock.getAsLong();
    boolean over = false;
    if (records != null) {
      over |= records.take(recordCount, now);
    }
    if (bytes != null) {
      over |= bytes.take(byteCount, now);
    }
    if (over) {
      overshoots++;
    }
  }

  /** How many admissions cost more than the balance left (soft-max overshoots). */
  long overshoots() {
    return overshoots;
  }

  private static long wait(Bucket bucket, long now) {
    return bucket == null ? 0 : bucket.waitNanos(now);
  }

  private static final class Bucket {
    private final double perSecond;
    private double balance;
    private long refilledAt;

    Bucket(double perSecond, long now) {
      this.perSecond = perSecond;
      this.balance = perSecond; // start with one second of budget
      this.refilledAt = now;
    }

    private void refill(long now) {
      balance = Math.min(perSecond, balance + (now - refilledAt) / 1e9 * perSecond);
      refilledAt = now;
    }

    long waitNanos(long now) {
      refill(now);
      return balance > 0
          ? 0
          : (long) Math.ceil((-balance + Double.MIN_NORMAL) / perSecond * 1e9) + 1;
    }

    /** Returns true if the cost exceeded the balance (an overshoot). */
    boolean take(long cost, long now) {
      refill(now);
      boolean over = cost > balance;
      balance -= cost;
      return over;
    }
  }
}
