package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.recovery.CleanupPasses;

/**
 * The aggregator's roles without Flink ({@link BatchAssembler}, {@link SinkLineage}, {@link
 * FailureCleanup}); the operator that glues them runs in {@code FileBatchAggregatorHarnessTest}.
 */
class AggregatorRolesTest {
  @Test
  void reportsWithoutFilesMovePositionsButMakeNoBatch() {
    BatchAssembler assembler = new BatchAssembler();
    assembler.continueFrom(Map.of("t/0", 10L));
    assembler.accept(new WriterReport("w1", List.of(), Map.of("t/0", 15L), Map.of("t/0", 12L)));
    assembler.accept(new WriterReport("w2", List.of(), Map.of("t/1", 4L), Map.of()));
    assertThat(assembler.hasFiles()).as("positions alone are no batch").isFalse();
    assertThat(assembler.receivedEnds())
        .as("received ends continue from the restored ones and move forward")
        .isEqualTo(Map.of("t/0", 15L, "t/1", 4L));
  }

  @Test
  void theLineageRemembersABoundedNumberOfBatches() {
    SinkLineage lineage = SinkLineage.start();
    int batches = SinkLineage.REMEMBERED_BATCHES + 5;
    for (int i = 1; i <= batches; i++) {
      lineage.emitted(
          new FileBatch(i, lineage.id(), List.<ClosedFile>of(), Map.of()), "batch-" + i);
    }
    assertThat(lineage.emittedBatchIds()).hasSize(SinkLineage.REMEMBERED_BATCHES);
    assertThat(lineage.pendingBatches())
        .as("the newest pending batches, oldest first")
        .extracting(PendingBatch::stored)
        .containsExactly(
            IntStream.rangeClosed(batches - SinkLineage.PENDING_BATCHES + 1, batches)
                .mapToObj(i -> "batch-" + i)
                .toArray(String[]::new));

    AggregatorState state =
        new AggregatorState(
            lineage.id(),
            lineage.emittedBatchIds(),
            lineage.pendingBatches(),
            Map.of(),
            0L,
            Map.of());
    SinkLineage restored = SinkLineage.restored(state);
    assertThat(restored.id()).isEqualTo(lineage.id());
    assertThat(restored.emittedBatchIds()).isEqualTo(lineage.emittedBatchIds());
    assertThat(restored.pendingBatches()).isEqualTo(lineage.pendingBatches());
  }

  @Test
  void theStateKeepsEveryWriterAtABarrierUpToIt() {
    FailureCleanup cleanup =
        FailureCleanup.afterRestore(
            CleanupPasses.startingNow(new Configuration()), 7, Map.of("old", 7L), 0L);
    cleanup.reported("w1");
    cleanup.reported("w2");
    cleanup.barrier(8);
    cleanup.reported("w1");
    cleanup.barrier(9);
    assertThat(cleanup.horizonsAt(8)).isEqualTo(Map.of("old", 7L, "w1", 8L, "w2", 8L));
    assertThat(cleanup.horizonsAt(9))
        .as("a writer that did not report before barrier 9 keeps no horizon from it")
        .isEqualTo(Map.of("old", 7L, "w1", 9L));

    FailureCleanup unknown =
        FailureCleanup.afterRestore(CleanupPasses.startingNow(new Configuration()), 7, null, 0L);
    unknown.reported("w1");
    unknown.barrier(8);
    assertThat(unknown.horizonsAt(8))
        .as("after a state without horizons they stay unknown until the first clean-up")
        .isNull();
    assertThat(
            FailureCleanup.afterStart(CleanupPasses.startingNow(new Configuration()), 0L)
                .horizonsAt(1))
        .isEqualTo(Map.of());
  }
}
