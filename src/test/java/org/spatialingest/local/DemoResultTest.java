package org.spatialingest.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The demo's last line: it claims that every produced record is committed only when the counts say
 * so.
 */
class DemoResultTest {
  private static final JobHealth HEALTHY = new JobHealth(true, 0, 0, 12, 1);

  private static DemoResult result(
      long produced, long rows, long rejects, JobHealth health, long unread, String drainFailure) {
    return new DemoResult(
        produced,
        rows,
        rejects,
        "spatial.telemetry",
        "spatial.telemetry_rejects",
        health,
        unread,
        Duration.ofSeconds(120),
        drainFailure);
  }

  @Test
  void everythingCommittedAndHealthyIsOk() {
    DemoResult r = result(1_000, 990, 10, HEALTHY, 0, null);
    assertThat(r.ok()).isTrue();
    assertThat(r.line())
        .isEqualTo(
            "RESULT OK: every produced record is committed: 1,000 produced = 990 rows in "
                + "spatial.telemetry + 10 in spatial.telemetry_rejects; 0 restarts, 0 failed checkpoints (12 completed, 1 "
                + "trigger refused before start).");
  }

  @Test
  void missingRowsAndUnreadRecordsAreCountedNotClaimed() {
    DemoResult r = result(1_000, 700, 0, HEALTHY, 300, null);
    assertThat(r.ok()).isFalse();
    assertThat(r.line())
        .isEqualTo(
            "RESULT FAILED: 700 of 1,000 produced records committed (700 rows in "
                + "spatial.telemetry + 0 in spatial.telemetry_rejects), 300 not committed; 300 records were left in Kafka, "
                + "not yet committed, when the demo stopped waiting for the job to catch up (after 120 s); 0 restarts, 0 failed "
                + "checkpoints (12 completed, 1 trigger refused before start).");
  }

  @Test
  void restartsFailTheRunEvenWhenTheCountsMatch() {
    DemoResult r = result(50, 50, 0, new JobHealth(true, 2, 3, 4, 0), 0, null);
    assertThat(r.ok()).isFalse();
    assertThat(r.line())
        .startsWith("RESULT FAILED: every produced record is committed: 50 produced = 50 rows")
        .endsWith("; 2 restarts, 3 failed checkpoints (4 completed).");
  }

  @Test
  void moreRowsThanRecordsUnwatchedJobAndFailedDrainAreNamed() {
    DemoResult r =
        result(50, 60, 0, new JobHealth(false, 0, 0, 0, 0), 0, "CheckpointException: declined");
    assertThat(r.ok()).isFalse();
    assertThat(r.line())
        .isEqualTo(
            "RESULT FAILED: 60 records committed for 50 produced (60 rows in spatial.telemetry "
                + "+ 0 in spatial.telemetry_rejects), 10 more than produced; restarts and failed checkpoints unknown (the "
                + "Flink REST API never answered); the drain failed: CheckpointException: declined.");
  }
}
