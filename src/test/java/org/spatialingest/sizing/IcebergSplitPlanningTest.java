package org.spatialingest.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Cases worked by hand from the rules in {@link IcebergSplitPlanning}'s javadoc. */
class IcebergSplitPlanningTest {
  private static final long MIB = 1L << 20;

  private static List<Long> mib(long... sizes) {
    List<Long> out = new ArrayList<>();
    for (long s : sizes) {
      out.add(s * MIB);
    }
    return out;
  }

  private static List<Long> taskMib(TaskEstimate e) {
    return e.tasks().stream().map(t -> TaskEstimate.taskBytes(t) / MIB).toList();
  }

  @Test
  void firstFitIntoOpenBins() {
    // weights 100, 60, 30, max(1, 4) = 4. 100 -> bin1; 60 does not fit bin1 (160) -> bin2;
    // 30 does not fit bin1 (130) -> bin2 (90); 1 MiB (weight 4) fits bin1 (104).
    TaskEstimate e =
        IcebergSplitPlanning.estimate(
            ScanInput.ofSizes(mib(100, 60, 30, 1)),
            128 * MIB,
            4 * MIB,
            10,
            OptionalInt.empty(),
            OptionalInt.empty());
    assertThat(e.estimatedTasks()).isEqualTo(2);
    assertThat(taskMib(e)).containsExactly(101L, 90L);
    assertThat(e.planningBytes()).isEqualTo((100 + 60 + 30 + 4) * MIB);
    assertThat(e.maxSplitBytes()).isEqualTo(128 * MIB);
  }

  @Test
  void lookbackClosesTheHeaviestBin() {
    // lookback 10: 100 -> b1, 100 -> b2, 20 -> b1 (120), 20 -> b2 (120): 2 tasks
    ScanInput in = ScanInput.ofSizes(mib(100, 100, 20, 20));
    assertThat(
            IcebergSplitPlanning.estimate(
                    in, 128 * MIB, 4 * MIB, 10, OptionalInt.empty(), OptionalInt.empty())
                .estimatedTasks())
        .isEqualTo(2);
    // lookback 1: 100 -> b1; 100 -> b2, 2 open > 1: close the heaviest, first of equals = b1 [100];
    // 20 -> b2 (120); 20 does not fit (140) -> b3, close heaviest b2 [100, 20]; end: b3 [20]
    TaskEstimate one =
        IcebergSplitPlanning.estimate(
            in, 128 * MIB, 4 * MIB, 1, OptionalInt.empty(), OptionalInt.empty());
    assertThat(taskMib(one)).containsExactly(100L, 120L, 20L);
  }

  @Test
  void fixedSizeSplitsAndMergeOfAdjacentRanges() {
    // 300 MiB at 128: 128 | 128 | 44, nothing fits with a 128 bin -> 3 tasks
    TaskEstimate big =
        IcebergSplitPlanning.estimate(
            ScanInput.ofSizes(mib(300)),
            128 * MIB,
            4 * MIB,
            10,
            OptionalInt.empty(),
            OptionalInt.empty());
    assertThat(taskMib(big)).containsExactly(128L, 128L, 44L);

    // 200 MiB at 64: 64, 64, 64, 8. The bin target is the split size too: each 64 fills a bin, 8
    // (weight 8) fits
    // none (64 + 8 > 64) -> 4 tasks of one range each
    TaskEstimate fixed =
        IcebergSplitPlanning.estimate(
            ScanInput.ofSizes(mib(200)),
            64 * MIB,
            4 * MIB,
            10,
            OptionalInt.empty(),
            OptionalInt.of(3));
    assertThat(taskMib(fixed)).containsExactly(64L, 64L, 64L, 8L);
    assertThat(fixed.maxChunksPerTask()).isEqualTo(1);
    assertThat(fixed.waves()).hasValue(2);

    // row-group splits smaller than the split size share a bin; touching ranges of one file merge,
    // files stay apart:
    // six splits of 100 bytes (open cost 0) fit one 1000-byte bin -> f0 [0, 300) and f1 [0, 300)
    ScanInput twoFiles =
        new ScanInput(
            List.of(300L, 300L), List.of(List.of(0L, 100L, 200L), List.of(0L, 100L, 200L)));
    TaskEstimate merged =
        IcebergSplitPlanning.estimate(
            twoFiles, 1000, 0, 10, OptionalInt.empty(), OptionalInt.empty());
    assertThat(merged.tasks())
        .containsExactly(List.of(new FileChunk(0, 0, 300), new FileChunk(1, 0, 300)));
    assertThat(merged.avgChunksPerTask()).isEqualTo(2.0);
  }

  @Test
  void rowGroupOffsetsDecideSplitsWhenUsable() {
    // offsets 4, 400, 800 in a 1000-byte file: [4,400) [400,800) [800,1000) whatever the split size
    assertThat(IcebergSplitPlanning.split(0, 1000, List.of(4L, 400L, 800L), 10))
        .extracting(FileChunk::offset, FileChunk::length)
        .containsExactly(tuple(4L, 396L), tuple(400L, 400L), tuple(800L, 200L));
    // packed at 1000 with no open cost: 396 + 400 + 200 = 996 -> one task, merged into one range
    ScanInput in = new ScanInput(List.of(1000L), List.of(List.of(4L, 400L, 800L)));
    TaskEstimate e =
        IcebergSplitPlanning.estimate(in, 1000, 0, 10, OptionalInt.empty(), OptionalInt.empty());
    assertThat(e.tasks()).containsExactly(List.of(new FileChunk(0, 4, 996)));

    // last offset not below the size, or offsets out of order: ignored, fixed 300-byte splits
    // instead
    assertThat(IcebergSplitPlanning.split(0, 1000, List.of(4L, 400L, 1000L), 300))
        .extracting(FileChunk::length)
        .containsExactly(300L, 300L, 300L, 100L);
    assertThat(IcebergSplitPlanning.split(0, 1000, List.of(400L, 4L), 300)).hasSize(4);
    assertThat(IcebergSplitPlanning.split(0, 1000, null, 300)).hasSize(4);
    assertThat(IcebergSplitPlanning.split(0, 0, null, 300)).isEmpty();
  }

  @Test
  void adaptiveSplitSize() {
    // 100 MiB over 8: 1 split < 8 -> max(12.5 MiB, min(16 MiB, 128 MiB)) = 16 MiB
    assertThat(IcebergSplitPlanning.adjustSplitSize(100 * MIB, 8, 128 * MIB)).isEqualTo(16 * MIB);
    // 1 GiB over 4: 8 splits >= 4 -> unchanged
    assertThat(IcebergSplitPlanning.adjustSplitSize(1024 * MIB, 4, 128 * MIB)).isEqualTo(128 * MIB);
    // 1 GiB over 16: 8 < 16 -> max(64 MiB, 16 MiB)
    assertThat(IcebergSplitPlanning.adjustSplitSize(1024 * MIB, 16, 128 * MIB)).isEqualTo(64 * MIB);
    TaskEstimate e =
        IcebergSplitPlanning.estimate(
            ScanInput.ofSizes(mib(1024)),
            128 * MIB,
            4 * MIB,
            10,
            OptionalInt.of(16),
            OptionalInt.empty());
    assertThat(e.maxPartitionBytes()).isEqualTo(128 * MIB);
    assertThat(e.maxSplitBytes()).isEqualTo(64 * MIB);
    assertThat(e.estimatedTasks()).isEqualTo(16);
  }

  @Test
  void openCostWeighsSmallFiles() {
    // 40 files of 1 MiB weigh 4 MiB each: 32 per 128 MiB bin -> 2 tasks (32 + 8), not 1
    long[] sizes = new long[40];
    Arrays.fill(sizes, 1);
    TaskEstimate e =
        IcebergSplitPlanning.estimate(
            ScanInput.ofSizes(mib(sizes)),
            128 * MIB,
            4 * MIB,
            10,
            OptionalInt.empty(),
            OptionalInt.empty());
    assertThat(e.tasks()).extracting(List::size).containsExactly(32, 8);
  }
}
