package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sizing.SizingBounds;

/** One test per close reason, and the packing rule, decided by {@link ClosePolicy} alone. */
class ClosePolicyTest {
  /** M = 1,000 bytes, T = 100 bytes, L = 10 s, C = 1 s */
  private static final SizingBounds BOUNDS =
      new SizingBounds(1_000, 100, Duration.ofSeconds(10), Duration.ofSeconds(1));

  private static final ClosePolicy BOUNDED = new ClosePolicy(ClosePolicyKind.BOUNDED, BOUNDS, 3);
  private static final ClosePolicy EVERY =
      new ClosePolicy(ClosePolicyKind.EVERY_CHECKPOINT, BOUNDS, 3);
  private static final long NOW = 1_000_000;

  record Buffer(String name, long bytes, long minIngestMillis) implements ClosePolicy.Candidate {}

  @Test
  void bytes() {
    // ratio 0.5: 200 buffered bytes encode to T
    assertThat(BOUNDED.targetReached(199, 0.5)).isFalse();
    assertThat(BOUNDED.targetReached(200, 0.5)).isTrue();
    Buffer full = new Buffer("full", 200, NOW);
    Buffer fresh = new Buffer("fresh", 10, NOW);
    assertThat(BOUNDED.atBarrier(List.of(full, fresh), NOW, 0.5, 0))
        .containsExactly(new ClosePolicy.Close<>(List.of(full), CloseReason.BYTES));
  }

  @Test
  void memory() {
    assertThat(BOUNDED.memoryFull(999)).isFalse();
    assertThat(BOUNDED.memoryFull(1_000)).isTrue();
    Buffer small = new Buffer("small", 10, NOW);
    Buffer big = new Buffer("big", 90, NOW);
    assertThat(BOUNDED.largest(java.util.Arrays.asList(small, null, big))).isSameAs(big);
  }

  @Test
  void partitionLimit() {
    assertThat(BOUNDED.partitionLimitExceeded(3)).isFalse();
    assertThat(BOUNDED.partitionLimitExceeded(4)).isTrue();
    // without parking every buffer past the open limit closes; with it, only past the parked limit
    assertThat(BOUNDED.parkedLimitReached(0)).isTrue();
    ClosePolicy parking = new ClosePolicy(ClosePolicyKind.BOUNDED, BOUNDS, 3, 2);
    assertThat(parking.parkedLimitReached(1)).isFalse();
    assertThat(parking.parkedLimitReached(2)).isTrue();
  }

  /** A buffer with parked rows: its rows in memory and parked. */
  record Parked(long bytes, long memoryBytes, long minIngestMillis)
      implements ClosePolicy.Candidate {}

  @Test
  void parkedRowsCountAgainstMemoryWhenTheyAreReadBack() {
    // the read back of 300 parked bytes must fit under M = 1,000 with what memory holds
    assertThat(BOUNDED.makeRoomFor(699, 300)).isFalse();
    assertThat(BOUNDED.makeRoomFor(700, 300)).isTrue();
    assertThat(BOUNDED.makeRoomFor(2_000, 0)).as("nothing to read").isFalse();
    // a buffer whose rows, parked and in memory, reach M closes; one without parked rows is left
    // to the writer's total
    assertThat(BOUNDED.tooLargeToLoad(new Parked(999, 10, NOW))).isFalse();
    assertThat(BOUNDED.tooLargeToLoad(new Parked(1_000, 10, NOW))).isTrue();
    assertThat(BOUNDED.tooLargeToLoad(new Parked(1_000, 1_000, NOW))).isFalse();
    // memory's choice is by bytes in memory, not by total
    Parked mostlyParked = new Parked(900, 10, NOW);
    Parked inMemory = new Parked(100, 100, NOW);
    assertThat(BOUNDED.largest(List.of(mostlyParked, inMemory))).isSameAs(inMemory);
  }

  @Test
  void latency() {
    // L - C = 9 s: a row 8.9 s old waits, one 9 s old closes with its partition's other buffers
    Buffer young = new Buffer("young", 10, NOW - 8_900);
    Buffer due = new Buffer("due", 10, NOW - 9_000);
    assertThat(BOUNDED.atBarrier(List.of(young), NOW, 1.0, 0)).isEmpty();
    assertThat(BOUNDED.atBarrier(List.of(young, due), NOW, 1.0, 0))
        .containsExactly(new ClosePolicy.Close<>(List.of(young, due), CloseReason.LATENCY));
    // the expected write time counts: 10 bytes at 10 ms per byte = 100 ms makes 8.9 s due
    assertThat(BOUNDED.atBarrier(List.of(young), NOW, 1.0, 10_000_000))
        .containsExactly(new ClosePolicy.Close<>(List.of(young), CloseReason.LATENCY));
  }

  @Test
  void checkpoint() {
    Buffer a = new Buffer("a", 10, NOW);
    Buffer b = new Buffer("b", 200, NOW);
    // 210 bytes at T = 100: two files of 105, cut in key order across the two buffers
    assertThat(EVERY.atBarrier(List.of(a, b), NOW, 1.0, 0))
        .containsExactly(new ClosePolicy.Close<>(List.of(a, b), CloseReason.CHECKPOINT, 2));
  }

  @Test
  void endOfInput() {
    Buffer a = new Buffer("a", 10, NOW);
    Buffer b = new Buffer("b", 20, NOW);
    assertThat(BOUNDED.atEndOfInput(List.of(a, b), 1.0))
        .containsExactly(new ClosePolicy.Close<>(List.of(a, b), CloseReason.END_OF_INPUT));
  }

  @Test
  void packingCutsAPartitionsBuffersInKeyOrderIntoTheFilesTheirBytesNeed() {
    Buffer a = new Buffer("a", 60, NOW);
    Buffer b = new Buffer("b", 60, NOW);
    Buffer c = new Buffer("c", 60, NOW);
    // whole buffers of 0.6 T would take three files; cut in key order, 180 bytes take two
    assertThat(BOUNDED.pack(List.of(a, b, c), CloseReason.LATENCY, 1.0))
        .containsExactly(new ClosePolicy.Close<>(List.of(a, b, c), CloseReason.LATENCY, 2));
    // a group stays within M = 1,000 bytes (it is read into memory whole)
    Buffer d = new Buffer("d", 590, NOW);
    Buffer e = new Buffer("e", 500, NOW);
    assertThat(BOUNDED.pack(List.of(a, d, e), CloseReason.END_OF_INPUT, 1.0))
        .containsExactly(
            new ClosePolicy.Close<>(List.of(a, d), CloseReason.END_OF_INPUT, 6),
            new ClosePolicy.Close<>(List.of(e), CloseReason.END_OF_INPUT, 5));
  }

  /** Iceberg's rule for the files of a rewrite ({@code SizeBasedFileRewritePlanner}), T = 100. */
  @Test
  void filesForBytesFollowsIcebergsRewriteRule() {
    assertThat(ClosePolicy.filesFor(1, 100)).isEqualTo(1);
    assertThat(ClosePolicy.filesFor(100, 100)).isEqualTo(1);
    assertThat(ClosePolicy.filesFor(109, 100)).as("up to 1.1 T: one file").isEqualTo(1);
    assertThat(ClosePolicy.filesFor(111, 100)).isEqualTo(2);
    assertThat(ClosePolicy.filesFor(175, 100))
        .as("a remainder of 0.75 T spread: too big")
        .isEqualTo(2);
    assertThat(ClosePolicy.filesFor(180, 100)).as("a remainder above 0.75 T").isEqualTo(2);
    assertThat(ClosePolicy.filesFor(320, 100)).as("spread: 107 each").isEqualTo(3);
    assertThat(ClosePolicy.filesFor(340, 100)).as("spread would be 113 each").isEqualTo(4);
  }

  /**
   * The writer learns the encoded ratio only from files of at least half of what encodes to T (a
   * small file's fixed Parquet bytes would raise it).
   */
  @Test
  void theRatioIsLearnedFromFilesOfAtLeastHalfOfT() {
    // ratio 0.5: 200 buffered bytes encode to T
    assertThat(BOUNDED.learnsRatioFrom(99, 0.5)).isFalse();
    assertThat(BOUNDED.learnsRatioFrom(100, 0.5)).isTrue();
    assertThat(BOUNDED.learnsRatioFrom(300, 0.5)).as("a file over T").isTrue();
  }
}
