package org.spatialingest.sink;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.UUID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.iceberg.flink.TableLoader;

/**
 * Pre-commit step with parallelism 1: merges the file batches of all writer subtasks into one batch per checkpoint,
 * so the committer makes one snapshot per checkpoint.
 *
 * <p>Batches are tagged with the checkpoint whose barrier releases them here, not with the id the writer used. That
 * matters at end of input: every writer tags its final files {@code Long.MAX_VALUE}, and writers finish at different
 * checkpoints; merging by the aggregator's own barrier (and at its own end of input) keeps every writer's last files.
 *
 * <p>State: the sink's lineage id and the ids of the batches it emitted most recently, so that a restore from an older
 * state can remove what this lineage committed after it ({@link RestoreReconciler}). Pending batches are never held
 * across a barrier.
 */
final class FileBatchAggregator extends AbstractStreamOperator<CommittableMessage<FileBatch>>
    implements OneInputStreamOperator<CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>, BoundedOneInput {
  /** Emitted batch ids remembered; the newest committed one before a restore point is all the reconciler needs. */
  static final int REMEMBERED_BATCHES = 256;

  private final TableLoader tableLoader;
  private final List<FileBatch> pending = new ArrayList<>();
  private final Deque<String> emitted = new ArrayDeque<>();
  private long lastCheckpointId;
  private String lineage;
  private transient ListState<String> lineageState;
  private transient ListState<String> emittedState;
  private transient ListState<Long> stateTimeState;

  FileBatchAggregator(TableLoader tableLoader) {
    this.tableLoader = tableLoader;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
    var store = context.getOperatorStateStore();
    lineageState = store.getListState(new ListStateDescriptor<>("lineage", Types.STRING));
    emittedState = store.getListState(new ListStateDescriptor<>("emitted-batch-ids", Types.STRING));
    stateTimeState = store.getListState(new ListStateDescriptor<>("state-time", Types.LONG));
    for (String l : lineageState.get()) {
      lineage = l;
    }
    emittedState.get().forEach(emitted::addLast);
    long stateTime = 0;
    for (Long t : stateTimeState.get()) {
      stateTime = t;
    }
    if (lineage == null) {
      lineage = UUID.randomUUID().toString();
      LOG.info("New sink lineage {}", lineage);
    } else {
      try (TableLoader loader = tableLoader.clone()) {
        loader.open();
        RestoreReconciler.reconcile(loader.loadTable(), lineage, new HashSet<>(emitted), stateTime);
      }
    }
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    lineageState.update(List.of(lineage));
    emittedState.update(new ArrayList<>(emitted));
    stateTimeState.update(List.of(System.currentTimeMillis()));
  }

  @Override
  public void processElement(StreamRecord<CommittableMessage<FileBatch>> element) {
    if (element.getValue() instanceof CommittableWithLineage<FileBatch> withLineage) {
      pending.add(withLineage.getCommittable());
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    emit(checkpointId);
    lastCheckpointId = checkpointId;
  }

  @Override
  public void endInput() {
    // committed by the final checkpoint, whose id is at least the next one
    emit(lastCheckpointId + 1);
  }

  private void emit(long checkpointId) {
    if (pending.isEmpty()) {
      return;
    }
    FileBatch merged = FileBatch.merge(checkpointId, lineage, pending);
    pending.clear();
    emitted.addLast(merged.batchId());
    while (emitted.size() > REMEMBERED_BATCHES) {
      emitted.removeFirst();
    }
    output.collect(new StreamRecord<>(new CommittableSummary<>(0, 1, checkpointId, 1, 0)));
    output.collect(new StreamRecord<>(new CommittableWithLineage<>(merged, checkpointId, 0)));
  }
}
