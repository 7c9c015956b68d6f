package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.junit.jupiter.api.Test;
import org.spatialingest.sizing.SizingBounds;

/**
 * The coordinator's merge: subtasks that each see one area get one set of boundaries that cuts
 * between the areas, and its checkpoint restores the same boundaries, also at another writer count.
 */
class RangeStatisticsTest {
  private static final SizingBounds BOUNDS =
      new SizingBounds(64_000_000, 4_000_000, Duration.ofHours(1), Duration.ofSeconds(1));

  /** Subtask {@code s} reports 1,000 rows with keys around {@code s * 10^15}. */
  private static List<SubtaskReport> oneAreaPerSubtask(int subtasks, long round) {
    return oneAreaPerSubtask(subtasks, round, s -> 1_000);
  }

  /**
   * Subtask {@code s} reports {@code rows(s)} rows in one second, keys around {@code s * 10^15}.
   */
  private static List<SubtaskReport> oneAreaPerSubtask(
      int subtasks, long round, java.util.function.IntUnaryOperator rows) {
    Random random = new Random(round);
    List<SubtaskReport> reports = new ArrayList<>();
    for (int s = 0; s < subtasks; s++) {
      long[] keys = new long[KeyReservoir.SIZE];
      for (int i = 0; i < keys.length; i++) {
        keys[i] = s * 1_000_000_000_000_000L + random.nextInt(1_000_000);
      }
      reports.add(
          new SubtaskReport(
              round,
              1,
              0,
              List.of(
                  List.of(
                      new SubtaskReport.PartitionSample(
                          "day=1",
                          rows.applyAsInt(s),
                          100_000 * rows.applyAsInt(s),
                          System.currentTimeMillis(),
                          keys)))));
    }
    return reports;
  }

  @Test
  void eachWriterBlockHoldsOneSubtasksAreaAndARestoreKeepsTheBoundaries() throws Exception {
    RangeStatistics statistics = new RangeStatistics(BOUNDS, 8, 32, 0);
    statistics.merge(oneAreaPerSubtask(8, 0), System.currentTimeMillis());
    GlobalRanges ranges = statistics.ranges(0);
    GlobalRanges.PartitionRanges day = ranges.tables().get(0).partitions().get("day=1");
    assertThat(day.ranges()).isEqualTo(32);
    // every 4th boundary (the edge of a writer's block) lies in the gap between two areas
    for (int w = 1; w < 8; w++) {
      long edge = day.boundaries()[w * 4 - 1];
      assertThat(edge)
          .as("block edge %d between areas %d and %d", w, w - 1, w)
          .isBetween((w - 1) * 1_000_000_000_000_000L + 1_000_000, w * 1_000_000_000_000_000L);
    }

    // a second round with the same spread keeps the boundaries exactly
    statistics.merge(oneAreaPerSubtask(8, 1), System.currentTimeMillis());
    assertThat(statistics.ranges(1).tables().get(0).partitions().get("day=1").boundaries())
        .containsExactly(day.boundaries());

    RangeStatisticsSerializer serializer = new RangeStatisticsSerializer(BOUNDS, 8, 32);
    byte[] checkpoint =
        SimpleVersionedSerialization.writeVersionAndSerialize(serializer, statistics);
    RangeStatistics restored =
        SimpleVersionedSerialization.readVersionAndDeSerialize(serializer, checkpoint);
    assertThat(restored.ranges(2).tables().get(0).partitions().get("day=1").boundaries())
        .containsExactly(day.boundaries());

    // rescaled to 4 writers: 16 ranges, cut from the same quantiles
    RangeStatistics rescaled =
        SimpleVersionedSerialization.readVersionAndDeSerialize(
            new RangeStatisticsSerializer(BOUNDS, 4, 32), checkpoint);
    GlobalRanges.PartitionRanges four =
        rescaled.ranges(2).tables().get(0).partitions().get("day=1");
    assertThat(four.ranges()).isEqualTo(16);
    assertThat(four.boundaries()[3])
        .as("the edge of the second writer's block, between areas 1 and 2")
        .isBetween(1_000_000_000_000_000L + 1_000_000, 2 * 1_000_000_000_000_000L);
  }

  @Test
  void theEarlyRoundGivesEachAreaItsOwnBlockWhateverTheSourcesFirstSpeeds() {
    // the first second after a start: subtask s read 100 * (1 + 2s) rows (15x between them)
    RangeStatistics statistics = new RangeStatistics(BOUNDS, 8, 32, 0);
    statistics.merge(oneAreaPerSubtask(8, 0, s -> 100 * (1 + 2 * s)), System.currentTimeMillis());
    long[] boundaries = statistics.ranges(0).tables().get(0).partitions().get("day=1").boundaries();
    for (int w = 1; w < 8; w++) {
      assertThat(boundaries[w * 4 - 1])
          .as("block edge %d between areas %d and %d", w, w - 1, w)
          .isBetween((w - 1) * 1_000_000_000_000_000L + 1_000_000, w * 1_000_000_000_000_000L);
    }

    // a checkpoint round weighs by rate: the fastest area takes more than one block
    RangeStatistics byRate = new RangeStatistics(BOUNDS, 8, 32, 0);
    byRate.merge(oneAreaPerSubtask(8, 5, s -> 100 * (1 + 2 * s)), System.currentTimeMillis());
    long[] rated = byRate.ranges(5).tables().get(0).partitions().get("day=1").boundaries();
    assertThat(rated[7 * 4 - 1])
        .as("the last block edge")
        .isGreaterThan(7 * 1_000_000_000_000_000L);
  }

  @Test
  void eventsRoundTripThroughTheirSerializers() throws Exception {
    SubtaskReport report = oneAreaPerSubtask(1, 7).get(0);
    SubtaskReportSerializer reports = new SubtaskReportSerializer();
    SubtaskReport back = reports.deserialize(reports.getVersion(), reports.serialize(report));
    assertThat(back.round()).isEqualTo(7);
    assertThat(back.tables().get(0).get(0).keys())
        .containsExactly(report.tables().get(0).get(0).keys());

    RangeStatistics statistics = new RangeStatistics(BOUNDS, 8, 32, 0);
    statistics.merge(oneAreaPerSubtask(8, 0), System.currentTimeMillis());
    GlobalRanges ranges = statistics.ranges(3);
    GlobalRangesSerializer serializer = new GlobalRangesSerializer();
    GlobalRanges read =
        serializer.deserialize(serializer.getVersion(), serializer.serialize(ranges));
    assertThat(read.finest()).isEqualTo(32);
    assertThat(read.tables().get(0).partitions().get("day=1").boundaries())
        .containsExactly(ranges.tables().get(0).partitions().get("day=1").boundaries());
  }

  @Test
  void aBoundedInputsPartitionAsksForNoMoreRangesThanItsWholeInputAlsoAfterARestore()
      throws Exception {
    RangeStatistics statistics = new RangeStatistics(BOUNDS, 8, 32, 0);
    statistics.merge(oneAreaPerSubtask(8, 0), System.currentTimeMillis());
    RangeStatistics.PartitionStatistics day = statistics.tables().get(0).partitions.get("day=1");
    assertThat(day.load.ranges).as("the rate per L asks for the finest split").isEqualTo(32);
    day.maxRanges = 8; // what StartingStatistics sets: the whole input fills 8 ranges
    day.load.ranges = 8;
    RangeStatisticsSerializer serializer = new RangeStatisticsSerializer(BOUNDS, 8, 32);
    RangeStatistics restored =
        SimpleVersionedSerialization.readVersionAndDeSerialize(
            serializer,
            SimpleVersionedSerialization.writeVersionAndSerialize(serializer, statistics));
    assertThat(restored.tables().get(0).partitions.get("day=1").maxRanges).isEqualTo(8);
    for (long round = 1; round <= PartitionLoad.STABLE_WINDOWS + 1; round++) {
      restored.merge(oneAreaPerSubtask(8, round), System.currentTimeMillis());
    }
    GlobalRanges.PartitionRanges ranges =
        restored.ranges(9).tables().get(0).partitions().get("day=1");
    assertThat(ranges.ranges())
        .as("a file source read fast: its rate asks for 32, its whole input for 8")
        .isEqualTo(8);
    assertThat(RangeCount.writersFor(ranges.ranges(), 32, 8)).isEqualTo(2);
  }
}
