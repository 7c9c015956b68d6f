package org.spatialingest.sink.write;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.options.SinkOptions;

/**
 * Says, at most once a minute per writer, when the partition limits close many files: the input
 * interleaves more time partitions per writer than {@code sink.max-open-partitions} holds in memory
 * plus {@code sink.max-parked-partitions} parks (a backfill in vehicle or id order spans every day
 * of it, for example), so each file holds one run of rows and the table gets many small files.
 * Measured before parking: 60,001 JSONL records cycling over 28 days wrote 60,001 files at an open
 * limit of 8 (29 files at 32). Cost: two counters per close by the limit.
 */
final class PartitionLimitWarning {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLimitWarning.class);

  /** Closes by the limit within one window that are worth a warning. */
  static final int CLOSES_WORTH_A_WARNING = 100;

  private static final long WINDOW_MILLIS = 60_000;

  private final int limit;
  private boolean counting;
  private long windowStart;
  private long closes;
  private long rows;

  PartitionLimitWarning(int limit) {
    this.limit = limit;
  }

  /**
   * Counts a file closed by the limit ({@code rows} rows); true when this close logged the warning.
   */
  boolean closed(int rows, long nowMillis) {
    if (!counting || nowMillis - windowStart >= WINDOW_MILLIS) {
      counting = true;
      windowStart = nowMillis;
      closes = 0;
      this.rows = 0;
    }
    closes++;
    this.rows += rows;
    if (closes != CLOSES_WORTH_A_WARNING) {
      return false;
    }
    LOG.warn(
        "{} files closed by the partition limit within {} s, {} rows each on average: the input"
            + " interleaves more time partitions per writer than {} holds in memory and {} ({})"
            + " parks (e.g. a backfill in id order, not time order), so files stay small. Raise {},"
            + " or feed the input in time order.",
        closes,
        (nowMillis - windowStart) / 1000,
        this.rows / closes,
        SinkOptions.MAX_OPEN_PARTITIONS.key(),
        SinkOptions.MAX_PARKED_PARTITIONS.key(),
        limit,
        SinkOptions.MAX_PARKED_PARTITIONS.key());
    return true;
  }
}
