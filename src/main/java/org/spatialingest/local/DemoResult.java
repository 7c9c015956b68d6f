package org.spatialingest.local;

import java.time.Duration;

/**
 * The demo's verdict, from counts taken by the demo itself: records produced (the topic's offsets),
 * rows this run committed to the table and to the rejects table (their snapshot totals after the
 * drain against the totals before the job started), records not yet committed when the demo stopped
 * waiting for the job to catch up (the consumer group's offsets, which are the table's positions,
 * before the drain), and what Flink reported about restarts and checkpoints. OK only when every
 * produced record is committed, the job had caught up, it never restarted, no checkpoint failed and
 * the drain succeeded.
 *
 * @param unreadWhenWaitEnded records not yet committed when the catch-up wait ended
 * @param waited how long the demo waited for the job to catch up
 * @param drainFailure why stop-with-savepoint failed, or null
 */
public record DemoResult(
    long produced,
    long rows,
    long rejects,
    String table,
    String rejectsTable,
    JobHealth health,
    long unreadWhenWaitEnded,
    Duration waited,
    String drainFailure) {

  public long committed() {
    return rows + rejects;
  }

  public boolean ok() {
    return drainFailure == null
        && health.healthy()
        && committed() == produced
        && unreadWhenWaitEnded == 0;
  }

  /** One line that states the result; the demo prints it last. */
  public String line() {
    StringBuilder s = new StringBuilder(ok() ? "RESULT OK: " : "RESULT FAILED: ");
    String split = String.format("%,d rows in %s + %,d in %s", rows, table, rejects, rejectsTable);
    if (committed() == produced) {
      s.append(
          String.format("every produced record is committed: %,d produced = %s", produced, split));
    } else if (committed() < produced) {
      s.append(
          String.format(
              "%,d of %,d produced records committed (%s), %,d not committed",
              committed(), produced, split, produced - committed()));
    } else {
      s.append(
          String.format(
              "%,d records committed for %,d produced (%s), %,d more than produced",
              committed(), produced, split, committed() - produced));
    }
    if (unreadWhenWaitEnded > 0) {
      s.append(
          String.format(
              "; %,d records were left in Kafka, not yet committed, when the demo stopped waiting for "
                  + "the job to catch up (after %d s)",
              unreadWhenWaitEnded, waited.toSeconds()));
    }
    s.append("; ").append(health.describe());
    if (drainFailure != null) {
      s.append("; the drain failed: ").append(drainFailure);
    }
    return s.append('.').toString();
  }
}
