package org.spatialingest.sink.distribution;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up protocol of one placement subtask while it has no ranges from the coordinator (a
 * start without restored ranges): the rows of the ranged table are held until the boundaries come
 * (normally within one to two seconds), and the coordinator is told early what this subtask reads.
 *
 * <ul>
 *   <li>At the first row of the ranged table the subtask announces that an early report follows
 *       ({@link Protocol#announceFirstRows}); the early report goes {@link
 *       StartupTimings#EARLY_REPORT_MILLIS} later or after {@link StartupTimings#EARLY_REPORT_ROWS}
 *       rows, whichever is first, or when the input ends.
 *   <li>The hold ends when the ranges come ({@link #rangesCame}), {@link
 *       StartupTimings#HOLD_MILLIS} after the first row, at {@link #HOLD_ROWS} rows or {@link
 *       #HOLD_BYTES} bytes held, at the end of input (after waiting for the ranges up to the same
 *       time, {@link #awaitingRanges}) or at finish. The held rows are then released, and all rows
 *       after them are placed as they come.
 *   <li>Held rows never cross a barrier: {@link #releaseBeforeBarrier} releases them and the hold
 *       goes on (the sink's positions rely on every row read before a barrier having reached a
 *       writer; waiting would not help, Flink holds back coordinator events between its checkpoint
 *       and this barrier).
 * </ul>
 *
 * Released rows go out by the global ranges if they came, else by the fallback ({@link
 * RangePlacement}): the operator decides, in {@link Protocol#release}. Nothing here is state: the
 * coordinator's checkpoint holds the statistics, and a range is only a file boundary.
 *
 * <p>Time is the clock passed in (milliseconds; the operator's processing time), and the operator's
 * timers call {@link #onTime} at {@link #earlyReportDueMillis} and {@link #holdEndsMillis}. Cost: a
 * held row is copied and kept (at most {@link #HOLD_ROWS} rows, {@link #HOLD_BYTES} bytes). Not
 * thread-safe (the task thread).
 *
 * @param <T> the held elements
 */
final class StartupHold<T> {
  private static final Logger LOG = LoggerFactory.getLogger(StartupHold.class);

  /** The most rows held. */
  static final int HOLD_ROWS = 20_000;

  /** The most (sampled) bytes held. */
  static final long HOLD_BYTES = 32L << 20;

  /** What the hold asks of its operator. */
  interface Protocol<T> {
    /** Tells the coordinator this subtask has its first rows: an early report follows. */
    void announceFirstRows();

    /** Sends the coordinator this subtask's early report (round 0). */
    void sendEarlyReport();

    /** Places the rows the hold kept, in the order they came. */
    void release(List<T> rows);
  }

  private final String owner;
  private final LongSupplier clockMillis;
  private final Protocol<T> protocol;

  private boolean holding;
  private boolean announced;
  private boolean earlyReported;
  private long firstRowMillis;
  private List<T> held = new ArrayList<>();
  private long heldBytes;

  /**
   * @param owner names the subtask in the log
   * @param holds whether to hold at all (a ranged table and no ranges yet); a hold that does not
   *     hold still announces nothing and sends its early report by rows
   * @param clockMillis the time, in milliseconds
   */
  StartupHold(String owner, boolean holds, LongSupplier clockMillis, Protocol<T> protocol) {
    this.owner = owner;
    this.holding = holds;
    this.clockMillis = clockMillis;
    this.protocol = protocol;
  }

  /** Whether rows of the ranged table are held now. */
  boolean holding() {
    return holding;
  }

  /** Rows held now. */
  int heldRows() {
    return held.size();
  }

  /** Whether the early report was sent. */
  boolean earlyReported() {
    return earlyReported;
  }

  /**
   * A row of the ranged table: the first one starts the hold's clock and, while holding, announces
   * the early report. Returns true exactly when it announced: then the operator sets its timers at
   * {@link #earlyReportDueMillis} and {@link #holdEndsMillis}.
   */
  boolean rangedRow() {
    if (announced) {
      return false;
    }
    announced = true;
    firstRowMillis = clockMillis.getAsLong();
    if (!holding) {
      return false;
    }
    protocol.announceFirstRows();
    return true;
  }

  /** When the early report is due by time. */
  long earlyReportDueMillis() {
    return firstRowMillis + StartupTimings.EARLY_REPORT_MILLIS;
  }

  /** When the hold ends by time. */
  long holdEndsMillis() {
    return firstRowMillis + StartupTimings.HOLD_MILLIS;
  }

  /** {@code rows} rows routed so far (all tables): the early report goes at enough of them. */
  void counted(long rows) {
    if (!earlyReported && rows >= StartupTimings.EARLY_REPORT_ROWS) {
      sendEarlyReport();
    }
  }

  /**
   * Keeps {@code copy} (a copy of a row of the ranged table; only while {@link #holding}), whose
   * sampled bytes are {@code bytes}; at the hold's limits the hold ends.
   */
  void hold(T copy, long bytes) {
    held.add(copy);
    heldBytes += bytes;
    if (held.size() >= HOLD_ROWS || heldBytes >= HOLD_BYTES) {
      end("the hold limit");
    }
  }

  /** A timer of the operator's, set by {@link #rangedRow}, fired at {@code nowMillis}. */
  void onTime(long nowMillis) {
    if (!announced) {
      return;
    }
    if (!earlyReported && nowMillis >= earlyReportDueMillis()) {
      sendEarlyReport();
    }
    if (nowMillis >= holdEndsMillis()) {
      end("the hold time");
    }
  }

  /** The coordinator's ranges came: the hold ends, the held rows go out by them. */
  void rangesCame() {
    end(null);
  }

  /** Before a barrier: the held rows go out (by the fallback); the hold goes on. */
  void releaseBeforeBarrier() {
    release();
  }

  /**
   * At the end of input: sends the early report if rows are held and it has not gone yet. Then the
   * operator takes mails (the coordinator's event among them) while {@link #awaitingRanges}.
   */
  void inputEnded() {
    if (holding && !held.isEmpty() && !earlyReported) {
      sendEarlyReport();
    }
  }

  /**
   * Whether rows are held and the ranges may still come in time (before {@link #holdEndsMillis}).
   */
  boolean awaitingRanges() {
    return holding && !held.isEmpty() && clockMillis.getAsLong() < holdEndsMillis();
  }

  /**
   * Ends the hold (no-op if it ended): the held rows and all after them are placed as they come.
   *
   * @param why names the cause in the log line that says the ranges did not come
   */
  void end(String why) {
    if (!holding) {
      return;
    }
    holding = false;
    if (why != null && announced) {
      LOG.info(
          "{}: no global ranges after {} ({} rows held): placing by this subtask's own keys until"
              + " they come",
          owner,
          why,
          held.size());
    }
    release();
  }

  private void sendEarlyReport() {
    earlyReported = true;
    protocol.sendEarlyReport();
  }

  private void release() {
    if (held.isEmpty()) {
      return;
    }
    List<T> rows = held;
    held = new ArrayList<>();
    heldBytes = 0;
    protocol.release(rows);
  }
}
