package org.spatialingest.sink.commit;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.io.FileIO;
import org.spatialingest.sink.recovery.RestoreReconciler;

/**
 * The aggregator's memory of what it emitted: the sink lineage's id (the {@link RestoreReconciler}
 * removes what this lineage committed after a restored state), the ids of the last {@value
 * #REMEMBERED_BATCHES} batches, and the stored locations of the last {@value #PENDING_BATCHES}
 * (batches the committer may still commit after a restore, whose files orphan clean-up keeps). No
 * Flink in it: the operator keeps it in {@link AggregatorState}.
 *
 * <p>Cost: constant memory (the two bounds); {@link #pendingFiles} reads each pending stored batch
 * back once (clean-up only).
 */
final class SinkLineage {
  /**
   * Emitted batch ids remembered; the newest committed one before a restore point is all the
   * reconciler needs.
   */
  static final int REMEMBERED_BATCHES = 256;

  /**
   * Emitted batches whose stored location is remembered: ones the committer may still commit after
   * a restore, whose files orphan clean-up must keep.
   */
  static final int PENDING_BATCHES = 8;

  private final String id;
  private final Deque<String> emitted = new ArrayDeque<>();

  /** oldest first */
  private final Deque<PendingBatch> pending = new ArrayDeque<>();

  private SinkLineage(String id, List<String> emitted, List<PendingBatch> pending) {
    this.id = id;
    this.emitted.addAll(emitted);
    this.pending.addAll(pending);
  }

  /** A new lineage: a start without state. */
  static SinkLineage start() {
    return new SinkLineage(UUID.randomUUID().toString(), List.of(), List.of());
  }

  /** The lineage a restored state continues. */
  static SinkLineage restored(AggregatorState state) {
    return new SinkLineage(state.lineage(), state.emittedBatchIds(), state.pendingBatches());
  }

  String id() {
    return id;
  }

  /** Remembers a batch emitted, whose closed files are stored at {@code storedLocation}. */
  void emitted(FileBatch batch, String storedLocation) {
    emitted.addLast(batch.batchId());
    while (emitted.size() > REMEMBERED_BATCHES) {
      emitted.removeFirst();
    }
    pending.addLast(PendingBatch.stored(storedLocation));
    while (pending.size() > PENDING_BATCHES) {
      pending.removeFirst();
    }
  }

  /** The remembered batch ids, oldest first. */
  List<String> emittedBatchIds() {
    return new ArrayList<>(emitted);
  }

  /** The remembered pending batches, oldest first. */
  List<PendingBatch> pendingBatches() {
    return new ArrayList<>(pending);
  }

  /**
   * The files of the batches the committer may still commit: each stored batch's file and the data
   * files it lists (read back), or an earlier build's data file list. A stored batch whose file is
   * gone was committed; its files are in the table.
   */
  Set<String> pendingFiles(FileIO io) throws IOException {
    Set<String> files = new HashSet<>();
    for (PendingBatch batch : pending) {
      files.addAll(batch.dataFiles());
      if (batch.stored() != null) {
        files.add(batch.stored());
        files.addAll(StoredBatch.dataFiles(io, batch.stored()));
      }
    }
    return files;
  }
}
