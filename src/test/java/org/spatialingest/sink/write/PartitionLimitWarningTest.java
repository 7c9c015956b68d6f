package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PartitionLimitWarningTest {
  @Test
  void warnsOnceAMinuteWhenTheLimitClosesManyFiles() {
    PartitionLimitWarning warning = new PartitionLimitWarning(8);
    int warnings = 0;
    long t = 1_000_000;
    for (int i = 0; i < 250; i++) { // 250 closes within 25 s: one warning, at the 100th
      if (warning.closed(1, t + i * 100L)) {
        warnings++;
        assertThat(i).isEqualTo(PartitionLimitWarning.CLOSES_WORTH_A_WARNING - 1);
      }
    }
    assertThat(warnings).isEqualTo(1);
    long nextMinute = t + 60_000;
    for (int i = 0; i < PartitionLimitWarning.CLOSES_WORTH_A_WARNING; i++) {
      if (warning.closed(1, nextMinute + i)) {
        warnings++;
      }
    }
    assertThat(warnings).as("again in the next minute").isEqualTo(2);
  }

  @Test
  void aFewClosesByTheLimitAreNormal() {
    PartitionLimitWarning warning = new PartitionLimitWarning(8);
    boolean warned = false;
    for (int i = 0; i < 200; i++) { // one close every second: 60 per window at most
      warned |= warning.closed(5_000, i * 1_000L);
    }
    assertThat(warned).isFalse();
  }
}
