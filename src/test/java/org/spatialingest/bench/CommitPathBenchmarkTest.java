package org.spatialingest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;

/**
 * The p = 1 harness at a small W: it runs the aggregator and committer to real commits, every file
 * is committed exactly once, the committer deleted every staging run, and the figures it reports
 * are filled in.
 */
// 14.6 s at W = 4 (38 s at W = 8) here under load, the simulated day 15.4 s; they check the
// harness,
// not the sink
@Tag("extended")
class CommitPathBenchmarkTest {
  @Test
  void everyFileIsCommittedOnceAndEveryFigureIsMeasured(@TempDir Path dir) throws Exception {
    var settings = new CommitPathBenchmark.Settings(4, 2, 0, 1, 4, 4, 10, 2, 0);

    CommitPathBenchmark.Run run = CommitPathBenchmark.run(settings, dir);

    assertThat(run.filesExpected()).isEqualTo(2L * 4 * 4 * 4);
    assertThat(run.filesCommitted()).isEqualTo(run.filesExpected());
    assertThat(run.distinctCommitted()).isEqualTo(run.filesExpected());
    // one per closing checkpoint; the quiet one commits none
    assertThat(run.snapshots()).isEqualTo(2);
    assertThat(run.checkpoints()).hasSize(3);
    for (CommitPathBenchmark.Checkpoint cp : run.checkpoints()) {
      assertThat(cp.step().aggState()).isPositive();
      if (cp.closing()) {
        assertThat(cp.step().committable()).isPositive();
        assertThat(cp.icebergCommit()).isPositive();
        assertThat(cp.positionsSummary()).isPositive();
      } else {
        assertThat(cp.step().committable()).isZero();
        assertThat(cp.icebergCommit()).isZero();
      }
    }
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.filter(p -> p.toString().endsWith(".rows"))).isEmpty();
    }
  }

  /**
   * The simulated day at a small size: 30 commits 10 simulated minutes apart (5 hourly partitions);
   * expiry every 10 commits at max-age 1 h keeps only the snapshots of the last hour on the
   * simulated clock (not on the wall clock, where every snapshot is seconds old), and the table
   * still holds every file once.
   */
  @Test
  void aSimulatedDayExpiresOnItsOwnClockAndCommitsEveryFileOnce(@TempDir Path dir)
      throws Exception {
    var settings = new CommitPathBenchmark.Settings(4, 30, 0, 0, 1, 2, 600, 1, 0);
    var day =
        new SimulatedDay.Day(
            30, 10, 600, JobConfig.TimePartitioning.HOUR, 1, Duration.ofHours(1), 2, 10);

    SimulatedDay.Result result = SimulatedDay.run(settings, day, dir);

    assertThat(result.filesWritten()).isEqualTo(30L * 4 * 2);
    assertThat(result.committed().files()).isEqualTo(result.filesWritten());
    assertThat(result.committed().distinct()).isEqualTo(result.filesWritten());
    assertThat(result.costs()).hasSize(30);
    assertThat(result.costs()).allSatisfy(c -> assertThat(c.committerCpu()).isPositive());
    // at commit 30 (simulated 05:00) a snapshot older than 1 h is one of commits 1..23
    assertThat(result.expiries()).hasSize(3);
    assertThat(result.expiries().get(2).after()).isEqualTo(30 - 23);
    assertThat(result.committed().snapshots()).isEqualTo(30 - 23);
  }
}
