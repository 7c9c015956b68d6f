package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The start-up hold's transitions on a fake clock (no Flink, no sleeping): the first row of the
 * ranged table announces the early report, which goes at {@link StartupTimings#EARLY_REPORT_MILLIS}
 * or {@link StartupTimings#EARLY_REPORT_ROWS}; held rows go out when the ranges come, at {@link
 * StartupTimings#HOLD_MILLIS}, at the hold's limits, and before a barrier (the hold going on); the
 * end of input waits for the ranges only until the hold's time.
 */
class StartupHoldTest {
  private long now = 50_000;
  private final List<String> calls = new ArrayList<>();
  private final List<List<Integer>> released = new ArrayList<>();

  private StartupHold<Integer> hold(boolean holds) {
    return new StartupHold<>(
        "test",
        holds,
        () -> now,
        new StartupHold.Protocol<>() {
          @Override
          public void announceFirstRows() {
            calls.add("announce");
          }

          @Override
          public void sendEarlyReport() {
            calls.add("early report");
          }

          @Override
          public void release(List<Integer> rows) {
            calls.add("release " + rows.size());
            released.add(rows);
          }
        });
  }

  /** Routes row {@code i} of the ranged table as the operator does. */
  private static void row(StartupHold<Integer> hold, int i, long rowsSoFar) {
    hold.rangedRow();
    hold.counted(rowsSoFar);
    if (hold.holding()) {
      hold.hold(i, 100);
    }
  }

  @Test
  void theTimingsAgree() {
    assertThat(StartupTimings.EARLY_MERGE_WAIT_MILLIS)
        .as("the early merge waits for early reports sent after the first rows")
        .isGreaterThan(StartupTimings.EARLY_REPORT_MILLIS);
    assertThat(StartupTimings.HOLD_MILLIS)
        .as("a subtask's hold outlasts the coordinator's wait for the early merge")
        .isGreaterThan(StartupTimings.EARLY_MERGE_WAIT_MILLIS);
  }

  @Test
  void theFirstRowAnnouncesOnceTheEarlyReportGoesByTimeAndTheRangesReleaseTheHeldRowsInOrder() {
    StartupHold<Integer> hold = hold(true);
    assertThat(hold.rangedRow()).as("the first row announces: set the timers").isTrue();
    assertThat(hold.earlyReportDueMillis()).isEqualTo(now + StartupTimings.EARLY_REPORT_MILLIS);
    assertThat(hold.holdEndsMillis()).isEqualTo(now + StartupTimings.HOLD_MILLIS);
    hold.counted(1);
    hold.hold(0, 100);
    for (int i = 1; i < 10; i++) {
      row(hold, i, i + 1);
    }
    assertThat(calls).containsExactly("announce");
    assertThat(hold.heldRows()).isEqualTo(10);

    now += StartupTimings.EARLY_REPORT_MILLIS - 1;
    hold.onTime(now);
    assertThat(calls).as("not due yet").containsExactly("announce");
    now += 1;
    hold.onTime(now);
    assertThat(calls).containsExactly("announce", "early report");
    assertThat(hold.holding()).isTrue();

    hold.rangesCame();
    assertThat(hold.holding()).isFalse();
    assertThat(calls).containsExactly("announce", "early report", "release 10");
    assertThat(released.get(0)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    now += StartupTimings.HOLD_MILLIS;
    hold.onTime(now);
    hold.end("finish");
    assertThat(calls).as("nothing more once it ended").hasSize(3);
  }

  @Test
  void withoutRangesTheHoldEndsAtItsTimeAndTheEarlyReportGoesByRowsFirst() {
    StartupHold<Integer> hold = hold(true);
    for (int i = 0; i < StartupTimings.EARLY_REPORT_ROWS; i++) {
      row(hold, i, i + 1);
    }
    assertThat(calls).containsExactly("announce", "early report");
    long first = hold.holdEndsMillis() - StartupTimings.HOLD_MILLIS;
    now = first + StartupTimings.EARLY_REPORT_MILLIS;
    hold.onTime(now);
    assertThat(calls).as("the early report went once").hasSize(2);
    now = first + StartupTimings.HOLD_MILLIS - 1;
    hold.onTime(now);
    assertThat(hold.holding()).isTrue();
    now += 1;
    hold.onTime(now);
    assertThat(hold.holding()).isFalse();
    assertThat(calls.get(2)).isEqualTo("release " + StartupTimings.EARLY_REPORT_ROWS);
  }

  @Test
  void heldRowsLeaveBeforeABarrierAndTheHoldGoesOnUntilItsLimit() {
    StartupHold<Integer> hold = hold(true);
    for (int i = 0; i < 5; i++) {
      row(hold, i, i + 1);
    }
    hold.releaseBeforeBarrier();
    assertThat(released).containsExactly(List.of(0, 1, 2, 3, 4));
    assertThat(hold.holding()).as("the hold goes on after the barrier").isTrue();
    hold.releaseBeforeBarrier();
    assertThat(released).as("nothing held, nothing released").hasSize(1);

    for (int i = 0; i < StartupHold.HOLD_ROWS; i++) {
      hold.hold(i, 1);
    }
    assertThat(hold.holding()).as("the row limit ends it").isFalse();
    assertThat(released.get(1)).hasSize(StartupHold.HOLD_ROWS);

    StartupHold<Integer> bytes = hold(true);
    bytes.rangedRow();
    bytes.hold(1, StartupHold.HOLD_BYTES - 1);
    assertThat(bytes.holding()).isTrue();
    bytes.hold(2, 1);
    assertThat(bytes.holding()).as("the byte limit ends it").isFalse();
  }

  @Test
  void theEndOfInputSendsTheEarlyReportAndWaitsForTheRangesOnlyUntilTheHoldsTime() {
    StartupHold<Integer> hold = hold(true);
    assertThat(hold.awaitingRanges()).as("nothing held: no wait").isFalse();
    row(hold, 0, 1);
    hold.inputEnded();
    assertThat(calls).containsExactly("announce", "early report");
    assertThat(hold.awaitingRanges()).isTrue();
    now = hold.holdEndsMillis();
    assertThat(hold.awaitingRanges()).isFalse();
    hold.end("the end of input");
    assertThat(released).containsExactly(List.of(0));
  }

  @Test
  void aSubtaskThatHoldsNothingAnnouncesNothingButStillReportsEarlyByRows() {
    StartupHold<Integer> hold = hold(false);
    assertThat(hold.rangedRow()).as("no timers").isFalse();
    hold.counted(StartupTimings.EARLY_REPORT_ROWS - 1);
    assertThat(calls).isEmpty();
    hold.counted(StartupTimings.EARLY_REPORT_ROWS);
    assertThat(calls).containsExactly("early report");
    hold.inputEnded();
    hold.end("finish");
    assertThat(calls).hasSize(1);
  }
}
