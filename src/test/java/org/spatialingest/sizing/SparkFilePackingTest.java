package org.spatialingest.sizing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SparkFilePackingTest {
  private static final long MIB = 1L << 20;

  private static TaskEstimate defaults(Long... sizes) {
    return SparkFilePacking.estimate(
        ScanInput.ofSizes(List.of(sizes)),
        128 * MIB,
        4 * MIB,
        OptionalInt.empty(),
        OptionalInt.empty());
  }

  @Test
  void twoFiftyMibFilesMakeOneTaskThreeMakeTwo() {
    // 0 + 50 <= 128 -> size 54; 54 + 50 = 104 <= 128 -> size 108; 108 + 50 = 158 > 128 -> new task
    assertThat(defaults(50 * MIB, 50 * MIB).estimatedTasks()).isEqualTo(1);
    TaskEstimate three = defaults(50 * MIB, 50 * MIB, 50 * MIB);
    assertThat(three.estimatedTasks()).isEqualTo(2);
    assertThat(three.maxTaskBytes()).isEqualTo(100 * MIB);
    assertThat(three.minTaskBytes()).isEqualTo(50 * MIB);
    assertThat(three.planningBytes()).isEqualTo(3 * 54 * MIB);
    assertThat(three.maxSplitBytes()).isEqualTo(128 * MIB);
  }

  @Test
  void parallelismLowersMaxSplitBytes() {
    List<Long> sizes = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      sizes.add(10 * MIB);
    }
    // totalBytes = 10 * (10 + 4) MiB = 140 MiB; / 4 = 35 MiB; min(128, max(4, 35)) = 35 MiB
    TaskEstimate e =
        SparkFilePacking.estimate(
            ScanInput.ofSizes(sizes), 128 * MIB, 4 * MIB, OptionalInt.of(4), OptionalInt.of(2));
    assertThat(e.maxSplitBytes()).isEqualTo(35 * MIB);
    // 0+10 -> 14; 14+10 = 24 <= 35 -> 28; 28+10 = 38 > 35 -> close: two files a task
    assertThat(e.estimatedTasks()).isEqualTo(5);
    assertThat(e.maxChunksPerTask()).isEqualTo(2);
    assertThat(e.waves()).hasValue(3);
    // the floor is the open cost: 1000 tiny files over parallelism 100000
    assertThat(
            SparkFilePacking.maxSplitBytes(
                128 * MIB, 4 * MIB, OptionalInt.of(100_000), 1000 * 4 * MIB))
        .isEqualTo(4 * MIB);
  }

  @Test
  void largeFilesAreCutAtMaxSplitBytesAndSortedDescending() {
    assertThat(SparkFilePacking.split(0, 300 * MIB, 128 * MIB))
        .extracting(FileChunk::offset, FileChunk::length)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(0L, 128 * MIB),
            org.assertj.core.groups.Tuple.tuple(128 * MIB, 128 * MIB),
            org.assertj.core.groups.Tuple.tuple(256 * MIB, 44 * MIB));
    List<FileChunk> sorted =
        SparkFilePacking.splitAndSort(ScanInput.ofSizes(List.of(10 * MIB, 300 * MIB)), 128 * MIB);
    assertThat(sorted)
        .extracting(FileChunk::length)
        .containsExactly(128 * MIB, 128 * MIB, 44 * MIB, 10 * MIB);
    // 128 | 128 | 44 + 10 (44 + 4 + 10 = 58 <= 128)
    assertThat(SparkFilePacking.pack(sorted, 128 * MIB, 4 * MIB)).hasSize(3);
  }

  @Test
  void zeroLengthFilesGiveNoRangeButCountInPlanningBytes() {
    TaskEstimate e = defaults(0L, 0L, 10 * MIB);
    assertThat(e.inputFiles()).isEqualTo(3);
    assertThat(e.estimatedTasks()).isEqualTo(1);
    assertThat(e.maxChunksPerTask()).isEqualTo(1);
    assertThat(e.planningBytes()).isEqualTo(22 * MIB);
    assertThat(defaults(0L).estimatedTasks()).isZero();
  }

  @Test
  void packingPropertiesHoldForRandomInputs() {
    Random random = new Random(20240611L);
    for (int c = 0; c < 300; c++) {
      int files = 1 + random.nextInt(60);
      List<Long> sizes = new ArrayList<>();
      for (int i = 0; i < files; i++) {
        int kind = random.nextInt(4);
        long size =
            switch (kind) {
              case 0 -> random.nextInt(1024); // tiny, includes 0
              case 1 -> (long) random.nextInt(8 * (int) MIB);
              case 2 -> (long) (random.nextDouble() * 200 * MIB);
              default -> (long) (random.nextDouble() * 1024 * MIB);
            };
        sizes.add(size);
      }
      long maxPartition = (1 + random.nextInt(256)) * MIB;
      long openCost = random.nextInt(3) == 0 ? 0 : random.nextInt(8 * (int) MIB);
      OptionalInt parallelism =
          random.nextBoolean() ? OptionalInt.of(1 + random.nextInt(64)) : OptionalInt.empty();
      ScanInput input = ScanInput.ofSizes(sizes);

      TaskEstimate e =
          SparkFilePacking.estimate(
              input, maxPartition, openCost, parallelism, OptionalInt.empty());
      long maxSplit = e.maxSplitBytes();
      String ctx =
          "case " + c + " sizes=" + sizes + " maxPartition=" + maxPartition + " open=" + openCost;

      // maxSplitBytes within its documented bounds
      assertThat(maxSplit).as(ctx).isLessThanOrEqualTo(maxPartition);
      if (parallelism.isEmpty()) {
        assertThat(maxSplit).as(ctx).isEqualTo(maxPartition);
      }

      // every byte of every file assigned exactly once: per file, ranges sorted by offset tile [0,
      // size)
      List<List<FileChunk>> perFile = new ArrayList<>();
      for (int i = 0; i < files; i++) {
        perFile.add(new ArrayList<>());
      }
      long chunkCount = 0;
      for (List<FileChunk> task : e.tasks()) {
        for (FileChunk ch : task) {
          perFile.get(ch.file()).add(ch);
          chunkCount++;
        }
      }
      for (int i = 0; i < files; i++) {
        List<FileChunk> ranges = perFile.get(i);
        ranges.sort(Comparator.comparingLong(FileChunk::offset));
        long next = 0;
        for (FileChunk ch : ranges) {
          assertThat(ch.offset()).as(ctx + " file " + i).isEqualTo(next);
          assertThat(ch.length()).as(ctx).isPositive();
          next = ch.end();
        }
        assertThat(next).as(ctx + " file " + i).isEqualTo(sizes.get(i));
      }

      // chunk count conserved: ceil(size / maxSplit) per file
      long expectedChunks = 0;
      for (long s : sizes) {
        expectedChunks += (s + maxSplit - 1) / maxSplit;
      }
      assertThat(chunkCount).as(ctx).isEqualTo(expectedChunks);

      long total = input.totalBytes();
      for (List<FileChunk> task : e.tasks()) {
        assertThat(task).as(ctx).isNotEmpty();
        // no task over maxSplitBytes unless it is a single range (a range is never longer than
        // maxSplitBytes anyway)
        if (task.size() > 1) {
          assertThat(TaskEstimate.taskBytes(task)).as(ctx).isLessThanOrEqualTo(maxSplit);
        }
        assertThat(task.get(0).length()).as(ctx).isLessThanOrEqualTo(maxSplit);
      }
      // lower bound on tasks
      assertThat((long) e.estimatedTasks())
          .as(ctx)
          .isGreaterThanOrEqualTo((total + maxSplit - 1) / maxSplit);

      // next fit: a task was closed only because the next range did not fit: (sum(len + open)) +
      // next > maxSplit
      for (int t = 0; t + 1 < e.tasks().size(); t++) {
        List<FileChunk> task = e.tasks().get(t);
        long charged = 0;
        for (FileChunk ch : task) {
          charged += ch.length() + openCost;
        }
        assertThat(charged + e.tasks().get(t + 1).get(0).length()).as(ctx).isGreaterThan(maxSplit);
      }
    }
  }
}
