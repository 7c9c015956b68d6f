package org.spatialingest.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BatchPlanTest {
  private static final long MB = 1_000_000L;

  private static SizingBounds bounds(
      long memoryMb, long targetMb, long latencyS, long checkpointS) {
    return new SizingBounds(
        memoryMb * MB,
        targetMb * MB,
        Duration.ofSeconds(latencyS),
        Duration.ofSeconds(checkpointS));
  }

  @Test
  void zeroRateCommitsEveryLatencyBound() {
    BatchPlan p = BatchPlan.derive(500, 200, 0, bounds(128, 128, 120, 10), 2, 3);
    assertThat(p.bindingConstraint()).isEqualTo(BindingConstraint.LATENCY);
    assertThat(p.commitIntervalSeconds()).isEqualTo(120.0);
    assertThat(p.rowsByTime()).isZero();
    assertThat(p.rowsPerBatch()).isZero();
    assertThat(p.expectedFileMb()).isZero();
    // 86400 / 120 = 720 commits a day, one (empty) file per partition per writer: 720 * 3 * 2
    assertThat(p.filesPerDay()).isCloseTo(4320, within(1e-6));
  }

  @Test
  void tenSecondIntervalOnFiftyPartitionsIs432000FilesPerDay() {
    // 5000 rec/s over 1 writer x 50 partitions = 100 rec/s per partition; L = C = 10 s -> 1000 rows
    // by latency,
    // far below memory (128e6 / (1000 * 50) = 2560) and file size (128e6 / 1000 = 128000)
    BatchPlan p = BatchPlan.derive(1000, 1000, 5000, bounds(128, 128, 10, 10), 1, 50);
    assertThat(p.rowsByTime()).isEqualTo(1000);
    assertThat(p.rowsByMemory()).isEqualTo(2560);
    assertThat(p.rowsByFile()).isEqualTo(128_000);
    assertThat(p.bindingConstraint()).isEqualTo(BindingConstraint.LATENCY);
    assertThat(p.commitIntervalSeconds()).isEqualTo(10.0);
    assertThat(p.filesPerDay()).isCloseTo(432_000, within(1e-6));
    assertThat(p.expectedFileMb()).isCloseTo(1.0, within(1e-9)); // 1000 rows * 1000 B
  }

  @Test
  void memoryBindsWhenRecordsAreLargeInBufferButSmallOnDisk() {
    // M = 64 MB, b = 10000 -> 6400 rows; T = 128 MB, e = 100 -> 1.28e6 rows; 10000 rec/s * 120 s =
    // 1.2e6 rows
    BatchPlan p = BatchPlan.derive(10_000, 100, 10_000, bounds(64, 128, 120, 10), 1, 1);
    assertThat(p.rowsByMemory()).isEqualTo(6400);
    assertThat(p.rowsByFile()).isEqualTo(1_280_000);
    assertThat(p.rowsByTime()).isEqualTo(1_200_000);
    assertThat(p.bindingConstraint()).isEqualTo(BindingConstraint.MEMORY);
    assertThat(p.rowsPerBatch()).isEqualTo(6400);
    // memory flush: M * e / b = 64e6 * 100 / 10000 = 0.64 MB
    assertThat(p.expectedFileMb()).isCloseTo(0.64, within(1e-9));
    // fills in 0.64 s, commits at the next checkpoint (10 s) holding ceil(10 / 0.64) = 16 flushed
    // files
    assertThat(p.commitIntervalSeconds()).isEqualTo(10.0);
    assertThat(p.filesPerCommit()).isEqualTo(16);
    assertThat(p.filesPerDay()).isCloseTo(8640.0 * 16, within(1e-6));
    assertThat(p.advice()).startsWith("Memory binds").contains("writers");
  }

  @Test
  void fileSizeBindsAndIntervalRoundsUpToWholeCheckpoints() {
    // T = 128 MB, e = 500 -> 256000 rows; 20000 rec/s -> fills in 12.8 s -> commits at the 20 s
    // checkpoint
    BatchPlan p = BatchPlan.derive(500, 500, 20_000, bounds(1000, 128, 120, 10), 1, 1);
    assertThat(p.rowsByFile()).isEqualTo(256_000);
    assertThat(p.rowsByMemory()).isEqualTo(2_000_000);
    assertThat(p.rowsByTime()).isEqualTo(2_400_000);
    assertThat(p.bindingConstraint()).isEqualTo(BindingConstraint.FILE_SIZE);
    assertThat(p.commitIntervalSeconds()).isEqualTo(20.0);
    assertThat(p.expectedFileMb()).isCloseTo(128.0, within(1e-9));
    assertThat(p.filesPerDay()).isCloseTo(86_400 / 20.0, within(1e-6));
    assertThat(p.advice()).startsWith("File size binds").contains("Healthy");
  }

  @Test
  void latencyBindsAtModerateRateWithMemoryToSpare() {
    // 100 rec/s * 120 s = 12000 rows, far below 256000 (file) and 256000 (memory)
    BatchPlan p = BatchPlan.derive(500, 500, 100, bounds(128, 128, 120, 10), 1, 1);
    assertThat(p.bindingConstraint()).isEqualTo(BindingConstraint.LATENCY);
    assertThat(p.rowsPerBatch()).isEqualTo(12_000);
    assertThat(p.commitIntervalSeconds()).isEqualTo(120.0);
    assertThat(p.expectedFileMb()).isCloseTo(6.0, within(1e-9));
    assertThat(p.filesPerDay()).isCloseTo(720, within(1e-6));
    assertThat(p.advice())
        .startsWith("Latency binds")
        .contains("memory is to spare")
        .contains("freshness");
  }

  @Test
  void tiesPreferMemoryThenFileSize() {
    // M = T = 100 MB and b = e = 1000 -> 100000 rows both; rate high so latency is far above
    BatchPlan memFile = BatchPlan.derive(1000, 1000, 1_000_000, bounds(100, 100, 120, 10), 1, 1);
    assertThat(memFile.rowsByMemory()).isEqualTo(memFile.rowsByFile());
    assertThat(memFile.bindingConstraint()).isEqualTo(BindingConstraint.MEMORY);

    // file = latency = 12000 rows: T = 12 MB / 1000 B; 100 rec/s * 120 s
    BatchPlan fileTime = BatchPlan.derive(1000, 1000, 100, bounds(1000, 12, 120, 10), 1, 1);
    assertThat(fileTime.rowsByFile()).isEqualTo(12_000).isEqualTo(fileTime.rowsByTime());
    assertThat(fileTime.bindingConstraint()).isEqualTo(BindingConstraint.FILE_SIZE);
  }

  @Test
  void memoryIsSharedByThePartitionsAWriterHoldsOpen() {
    BatchPlan one = BatchPlan.derive(1000, 1000, 1000, bounds(128, 128, 120, 10), 1, 1);
    BatchPlan four = BatchPlan.derive(1000, 1000, 1000, bounds(128, 128, 120, 10), 1, 4);
    assertThat(one.rowsByMemory()).isEqualTo(128_000);
    assertThat(four.rowsByMemory()).isEqualTo(32_000);
    // rate split over writers and partitions: 1000 / (2 * 4) * 120 = 15000
    assertThat(BatchPlan.derive(1000, 1000, 1000, bounds(128, 128, 120, 10), 2, 4).rowsByTime())
        .isEqualTo(15_000);
  }

  @Test
  void latencyCapIsTheLastCheckpointNotAfterL() {
    // L = 25 s, C = 10 s: commits at 20 s; L = 5 s < C = 10 s: every checkpoint
    assertThat(
            BatchPlan.derive(100, 100, 1, bounds(128, 128, 25, 10), 1, 1).commitIntervalSeconds())
        .isEqualTo(20.0);
    assertThat(BatchPlan.derive(100, 100, 1, bounds(128, 128, 5, 10), 1, 1).commitIntervalSeconds())
        .isEqualTo(10.0);
    // a file-size batch that would take 300 s is still committed at L
    BatchPlan capped = BatchPlan.derive(1000, 1000, 400, bounds(1000, 128, 120, 10), 1, 1);
    assertThat(capped.commitIntervalSeconds()).isEqualTo(120.0);
  }

  @Test
  void rejectsRecordsLargerThanTheMemoryShare() {
    assertThatThrownBy(() -> BatchPlan.derive(2_000_000, 100, 10, bounds(1, 128, 120, 10), 1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("memory budget");
    assertThatThrownBy(() -> BatchPlan.derive(100, 100, -1, bounds(1, 128, 120, 10), 1, 1))
        .hasMessageContaining("rate");
    assertThatThrownBy(() -> BatchPlan.derive(100, 100, 1, bounds(1, 128, 120, 10), 0, 1))
        .hasMessageContaining("writers");
  }
}
