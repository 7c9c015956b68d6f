package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.spatialingest.config.JobConfig.ClosePolicyKind;
import org.spatialingest.sink.core.CloseReason;
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
    assertThat(EVERY.atBarrier(List.of(a, b), NOW, 1.0, 0))
        .containsExactly(
            new ClosePolicy.Close<>(List.of(a), CloseReason.CHECKPOINT),
            new ClosePolicy.Close<>(List.of(b), CloseReason.CHECKPOINT));
  }

  @Test
  void endOfInput() {
    Buffer a = new Buffer("a", 10, NOW);
    Buffer b = new Buffer("b", 20, NOW);
    assertThat(BOUNDED.atEndOfInput(List.of(a, b), 1.0))
        .containsExactly(new ClosePolicy.Close<>(List.of(a, b), CloseReason.END_OF_INPUT));
  }

  @Test
  void packingKeepsKeyOrderAndStaysWithinT() {
    Buffer a = new Buffer("a", 40, NOW);
    Buffer b = new Buffer("b", 50, NOW);
    Buffer c = new Buffer("c", 30, NOW);
    Buffer d = new Buffer("d", 150, NOW);
    Buffer e = new Buffer("e", 5, NOW);
    assertThat(BOUNDED.pack(List.of(a, b, c, d, e), CloseReason.LATENCY, 1.0))
        .extracting(ClosePolicy.Close::buffers)
        .containsExactly(List.of(a, b), List.of(c), List.of(d), List.of(e));
  }
}
