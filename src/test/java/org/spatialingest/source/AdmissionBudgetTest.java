package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AdmissionBudgetTest {
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);

  @Test
  void noCapsAdmitEverything() {
    AdmissionBudget budget = new AdmissionBudget(0, 0, clock::get);
    assertThat(budget.enabled()).isFalse();
    budget.charge(1_000_000, 1_000_000_000);
    assertThat(budget.waitNanos()).isZero();
    assertThat(budget.binding()).isEqualTo(AdmissionBudget.Cap.NONE);
  }

  @Test
  void recordCapAdmitsItsRateOverTime() {
    AdmissionBudget budget = new AdmissionBudget(100, 0, clock::get);
    long admitted = 0;
    // simulate 10 s in 1 ms steps, admitting whenever the budget allows
    for (int ms = 0; ms < 10_000; ms++) {
      while (budget.waitNanos() == 0) {
        budget.charge(1, 0);
        admitted++;
      }
      clock.addAndGet(1_000_000);
    }
    // one second of initial budget plus 100/s for 10 s
    assertThat(admitted).isBetween(1_090L, 1_110L);
    assertThat(budget.binding()).isEqualTo(AdmissionBudget.Cap.RECORDS);
  }

  @Test
  void theLowerCapBinds() {
    // 1,000 records/s but only 10,000 bytes/s of 100-byte records: bytes bind at 100 records/s
    AdmissionBudget budget = new AdmissionBudget(1_000, 10_000, clock::get);
    long admitted = 0;
    for (int ms = 0; ms < 5_000; ms++) {
      while (budget.waitNanos() == 0) {
        budget.charge(1, 100);
        admitted++;
      }
      clock.addAndGet(1_000_000);
    }
    assertThat(admitted).isBetween(590L, 610L);
    assertThat(budget.binding()).isEqualTo(AdmissionBudget.Cap.BYTES);
  }

  @Test
  void aRecordLargerThanTheWholeBudgetStillPassesAndIsCounted() {
    AdmissionBudget budget = new AdmissionBudget(0, 1_000, clock::get);
    assertThat(budget.waitNanos()).isZero();
    budget.charge(1, 5_000); // five seconds' worth in one record
    assertThat(budget.overshoots()).isEqualTo(1);
    long wait = budget.waitNanos();
    assertThat(wait)
        .isBetween(3_900_000_000L, 4_100_000_000L); // the debt is paid before the next record
    clock.addAndGet(wait);
    assertThat(budget.waitNanos()).isZero();
  }

  @Test
  void idleTimeSavesAtMostOneSecondOfBudget() {
    AdmissionBudget budget = new AdmissionBudget(50, 0, clock::get);
    clock.addAndGet(60_000_000_000L);
    long burst = 0;
    while (budget.waitNanos() == 0) {
      budget.charge(1, 0);
      burst++;
    }
    assertThat(burst).isEqualTo(50);
  }
}
