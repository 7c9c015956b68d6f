package org.spatialingest.sink.commit;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.spatialingest.sink.compat.AggregatorListStates;
import org.spatialingest.sink.recovery.RestoreReconciler;
import org.spatialingest.sink.recovery.StagingReferences;

/**
 * What the {@link FileBatchAggregator} checkpoints, as one versioned value ({@link
 * AggregatorStateSerializer}).
 *
 * @param lineage the sink lineage (see {@link RestoreReconciler})
 * @param emittedBatchIds ids of the last {@link SinkLineage#REMEMBERED_BATCHES} batches it emitted,
 *     oldest first
 * @param pendingBatches the last {@link SinkLineage#PENDING_BATCHES} batches, oldest first: ones
 *     the committer may still commit after a restore, so orphan clean-up keeps their files (each a
 *     stored batch's location, or an earlier build's list of data files)
 * @param receivedEnds per source key, one past the highest position the writers reported received
 *     (a key some writer still buffers may lag: its lowest buffered position bounds what is
 *     committed; a closed file's keys are always up to date)
 * @param stateTimeMillis when the state was taken (bounds the restore reconciliation and orphan
 *     search)
 * @param stagingHorizons per earlier writer token, the highest checkpoint whose staging runs by it
 *     this state may reference ({@link StagingReferences}); {@code null} while unknown (after
 *     restoring a state of a build that did not keep them, until the first clean-up)
 */
record AggregatorState(
    String lineage,
    List<String> emittedBatchIds,
    List<PendingBatch> pendingBatches,
    Map<String, Long> receivedEnds,
    long stateTimeMillis,
    Map<String, Long> stagingHorizons) {
  AggregatorState {
    emittedBatchIds = List.copyOf(emittedBatchIds);
    pendingBatches = List.copyOf(pendingBatches);
    receivedEnds = Map.copyOf(receivedEnds);
    stagingHorizons = stagingHorizons == null ? null : new HashMap<>(stagingHorizons);
  }

  /** The state the six list states of releases up to 99d1af5 held, converted as it is read. */
  static AggregatorState of(AggregatorListStates.Restored old) {
    return new AggregatorState(
        old.lineage(),
        old.emittedBatchIds(),
        old.pendingBatchDataFiles().stream().map(PendingBatch::ofDataFiles).toList(),
        old.receivedEnds(),
        old.stateTimeMillis(),
        old.stagingHorizons());
  }
}
