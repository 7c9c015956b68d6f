package org.spatialingest.sink.distribution;

/**
 * The times of the start-up protocol between the placement subtasks ({@link WriterAssigner}, its
 * {@link StartupHold}) and their {@link RangeCoordinator}, in one place because each side's wait is
 * sized by the other's. After a start without ranges a subtask announces its first row of the
 * ranged table and sends an early report {@link #EARLY_REPORT_MILLIS} after it (sooner after {@link
 * #EARLY_REPORT_ROWS} rows); the coordinator merges that early round once every subtask reported,
 * or {@link #EARLY_MERGE_WAIT_MILLIS} after the first announcement; the subtask holds its first
 * rows for at most {@link #HOLD_MILLIS}, which outlasts that wait. If no subtask announces rows
 * within {@link #ANNOUNCE_WAIT_MILLIS} of the first one opening, the coordinator stops waiting.
 *
 * <p>Constants only (their values are those {@code WriterAssigner} and {@code RangeCoordinator} had
 * before they moved here).
 */
final class StartupTimings {
  private StartupTimings() {}

  /** Rows after which a subtask sends its early report after a start. */
  static final int EARLY_REPORT_ROWS = 2_048;

  /**
   * Time after its first row at which a subtask sends its early report, if it has fewer rows: the
   * sources' first half second differs in speed by 2x and more on a loaded machine, which weighs
   * the areas of a keyed topic unevenly.
   */
  static final long EARLY_REPORT_MILLIS = 1_000;

  /** How much later than another a source subtask may start reading. */
  static final long SOURCE_START_SKEW_MILLIS = 1_000;

  /**
   * How long the coordinator's early merge waits for the subtasks after the first one announced
   * rows: their early reports come {@link #EARLY_REPORT_MILLIS} after their own first rows, and a
   * source subtask may start {@link #SOURCE_START_SKEW_MILLIS} later than another.
   */
  static final long EARLY_MERGE_WAIT_MILLIS = EARLY_REPORT_MILLIS + SOURCE_START_SKEW_MILLIS;

  /**
   * The longest the first rows after a start wait for the coordinator's boundaries: the early
   * merge's wait plus a second for the announcement's way to the coordinator, the merge and the
   * boundaries' way back. The coordinator completes no checkpoint while the early merge is due, so
   * the boundaries normally come before the first barrier.
   */
  static final long HOLD_MILLIS = EARLY_MERGE_WAIT_MILLIS + 1_000;

  /**
   * How long after the first subtask opened the coordinator waits for one to announce rows before
   * it lets checkpoints go without an early merge (a checkpoint after a start without ranges comes
   * at most about this late).
   */
  static final long ANNOUNCE_WAIT_MILLIS = 3_000;
}
