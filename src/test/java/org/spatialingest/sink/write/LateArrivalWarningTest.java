package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LateArrivalWarningTest {
  private static final long L = 60_000;
  private static final long C = 10_000;

  @Test
  void aCloseIsLateWhenItsOldestRowWasHalfOfLOldAtOpening() {
    LateArrivalWarning warning = new LateArrivalWarning(L);
    assertThat(warning.latencyClose(L / 2)).isTrue();
    assertThat(warning.latencyClose(L / 2 - 1)).isFalse();
    assertThat(warning.latencyClose(0)).isFalse();
  }

  @Test
  void lateClosesAtEveryBarrierWarnOnceAWindowAfterTwoL() {
    LateArrivalWarning warning = new LateArrivalWarning(L);
    long t = 1_000_000;
    int warnings = 0;
    long firstWarningAt = -1;
    for (int i = 0; i < 60; i++) { // 10 min of barriers, every one with late closes
      if (barrier(warning, 3, t + i * C)) {
        warnings++;
        firstWarningAt = i * C;
      }
    }
    assertThat(warnings).as("once in the window").isEqualTo(1);
    assertThat(firstWarningAt).as("not before 2 L of late barriers").isEqualTo(2 * L);
    assertThat(barrier(warning, 3, t + LateArrivalWarning.WINDOW_MILLIS + 2 * L)).isFalse();
  }

  @Test
  void aRestartCatchingUpForLessThanTwoLDoesNotWarn() {
    LateArrivalWarning warning = new LateArrivalWarning(L);
    long t = 0;
    boolean warned = false;
    for (int i = 0; i < 30; i++) { // C = 1 s: 30 late barriers within 30 s < 2 L
      warned |= barrier(warning, 5, t + i * 1_000L);
    }
    for (int i = 30; i < 600; i++) { // then caught up: no late closes
      warned |= barrier(warning, 0, t + i * 1_000L);
    }
    assertThat(warned).isFalse();
  }

  /** A barrier after {@code lateCloses} late latency closes and one fresh one. */
  private static boolean barrier(LateArrivalWarning warning, int lateCloses, long nowMillis) {
    for (int i = 0; i < lateCloses; i++) {
      warning.latencyClose(L);
    }
    warning.latencyClose(0); // fresh rows closed by L count for nothing
    return warning.barrier(nowMillis);
  }
}
