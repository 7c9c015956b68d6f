package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.sizing.SizingBounds;

/**
 * Range boundaries follow the data, and the range count follows bytes per L, on Hilbert keys of
 * real coordinates.
 */
class KeyRangesTest {
  private static final HilbertCurve CURVE = HilbertCurve.CRS84;

  @Test
  void aHotSpotIsSpreadOverTheRanges() {
    // 80 % of the points within 0.2 degrees of one city centre, the rest over Europe
    Random random = new Random(7);
    KeySample sample = new KeySample();
    long[] keys = new long[100_000];
    for (int i = 0; i < keys.length; i++) {
      boolean hot = random.nextInt(10) < 8;
      double x = hot ? 2.35 + random.nextGaussian() * 0.05 : -10 + random.nextDouble() * 40;
      double y = hot ? 48.85 + random.nextGaussian() * 0.05 : 35 + random.nextDouble() * 25;
      keys[i] = CURVE.key(x, y);
      sample.add(keys[i]);
    }
    sample.refresh();
    int writers = 4;
    long[] boundaries = sample.boundaries(writers);
    long[] perRange = new long[writers];
    for (long key : keys) {
      perRange[KeySample.rangeOf(boundaries, key)]++;
    }
    double mean = keys.length / (double) writers;
    for (long n : perRange) {
      assertThat((double) n)
          .as("rows per range %s", Arrays.toString(perRange))
          .isBetween(mean / 2, mean * 2);
    }
  }

  @Test
  void boundariesCutAtTheSampleQuantilesAndRangesAreOrdered() {
    KeySample sample = new KeySample();
    for (long k = 0; k < 1000; k++) {
      sample.add(k * 10);
    }
    sample.refresh();
    assertThat(sample.boundaries(1)).isEmpty();
    assertThat(sample.boundaries(4)).containsExactly(2500, 5000, 7500);
    long[] b = sample.boundaries(4);
    assertThat(KeySample.rangeOf(b, 0)).isZero();
    assertThat(KeySample.rangeOf(b, 2499)).isZero();
    assertThat(KeySample.rangeOf(b, 2500)).isEqualTo(1);
    assertThat(KeySample.rangeOf(b, Long.MAX_VALUE)).isEqualTo(3);
  }

  @Test
  void theSampleKeepsTheMostRecentKeys() {
    KeySample sample = new KeySample();
    for (int i = 0; i < KeySample.SIZE; i++) {
      sample.add(1);
    }
    for (int i = 0; i < KeySample.SIZE; i++) {
      sample.add(1000 + i);
    }
    sample.refresh();
    assertThat(sample.boundaries(2)[0]).isEqualTo(1000 + KeySample.SIZE / 2);
  }

  @Test
  void rangesFollowBytesPerLatencyOverTheTargetFile() {
    // T = 10 MB, M = 100 MB, L = 10 s, Parquet at 0.5 of the buffered bytes: a range must bring 20
    // MB per L
    SizingBounds bounds =
        new SizingBounds(100_000_000, 10_000_000, Duration.ofSeconds(10), Duration.ofSeconds(1));
    RangeCount count = RangeCount.of(bounds, 0.5, 4, 8);
    assertThat(count.bytesPerRange()).isEqualTo(20_000_000);
    assertThat(count.maxRanges())
        .as("4 writers x 4 buffers each (half of 8 open partitions; M holds 5)")
        .isEqualTo(16);
    assertThat(count.ranges(0, 0)).isEqualTo(1);
    assertThat(count.ranges(3_900_000, 0))
        .as("39 MB per L: one file's worth, not two")
        .isEqualTo(1);
    assertThat(count.ranges(4_000_000, 0)).isEqualTo(2);
    assertThat(count.ranges(30_000_000, 0))
        .as("15 ranges' worth: the power of two below")
        .isEqualTo(8);
    assertThat(count.ranges(1e12, 0)).isEqualTo(16);
    assertThat(count.finest()).isEqualTo(16);
    assertThat(count.ranges(0, 10_001))
        .as("rows older than L: a backlog, the finest split (on every writer)")
        .isEqualTo(16);
    assertThat(count.ranges(30_000_000, 10_001)).isEqualTo(16);
    assertThat(RangeCount.writersFor(16, count.finest(), 4)).isEqualTo(4);
  }

  @Test
  void aNewRangeCountAppliesOnlyOnceItIsAskedForThreeWindowsInARow() {
    PartitionLoad load = new PartitionLoad(0);
    load.closeWindow(1);
    assertThat(load.propose(4)).as("the first window applies at once").isTrue();
    load.closeWindow(1);
    assertThat(load.propose(8)).isFalse();
    load.closeWindow(1);
    assertThat(load.propose(4)).as("back to the current count: the proposal is dropped").isFalse();
    for (int i = 0; i < PartitionLoad.STABLE_WINDOWS - 1; i++) {
      load.closeWindow(1);
      assertThat(load.propose(8)).isFalse();
    }
    load.closeWindow(1);
    assertThat(load.propose(8)).isTrue();
    assertThat(load.ranges).isEqualTo(8);
  }

  @Test
  void anUnknownRatioCapsTheRangesByWhatMHoldsAtTheLowestRatio() {
    // T = 32 MB, M = 128 MB, a table without commits: points encode at ~0.28, so a range needs
    // ~114 MB buffered for a file of T; four ranges per writer (M / T at ratio 1) closed every
    // buffer by memory at a quarter of M
    SizingBounds bounds =
        new SizingBounds(128_000_000, 32_000_000, Duration.ofSeconds(60), Duration.ofSeconds(10));
    RangeCount unknown = RangeCount.of(bounds, 0, 2, 8);
    assertThat(unknown.maxRanges()).as("one range per writer: M / (T / 0.25)").isEqualTo(2);
    assertThat(unknown.bytesPerRange())
        .as("a range's bytes per L still at ratio 1, as the writers close")
        .isEqualTo(32_000_000);
    assertThat(unknown.ranges(0, 120_000)).as("a backlog: the finest split").isEqualTo(2);

    RangeCount known = RangeCount.of(bounds, 0.5, 2, 8);
    assertThat(known.maxRanges()).as("learned 0.5: 64 MB per range, two per writer").isEqualTo(4);

    SizingBounds smallT =
        new SizingBounds(128_000_000, 1_000_000, Duration.ofSeconds(12), Duration.ofSeconds(1));
    assertThat(RangeCount.of(smallT, 0, 2, 8).maxRanges())
        .as("M holds 16 T or more: the cap of 4 per writer, as at ratio 1")
        .isEqualTo(8);
  }

  @Test
  void memoryCapsTheRangesAWriterHolds() {
    // T = M = 128 MB with an unknown ratio (1): a range fills M, so each writer holds one
    SizingBounds bounds =
        new SizingBounds(128_000_000, 128_000_000, Duration.ofSeconds(120), Duration.ofSeconds(10));
    RangeCount count = RangeCount.of(bounds, 0, 3, 8);
    assertThat(count.bytesPerRange()).isEqualTo(128_000_000);
    assertThat(count.maxRanges()).isEqualTo(3);
    assertThat(count.ranges(1_000_000, 0))
        .as("1 MB/s = 120 MB per L: under one range's worth")
        .isEqualTo(1);
  }
}
