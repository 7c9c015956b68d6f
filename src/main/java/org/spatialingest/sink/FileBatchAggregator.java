package org.spatialingest.sink;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Pre-commit step with parallelism 1: merges the file batches of all writer subtasks into one batch per checkpoint,
 * so the committer makes one snapshot per checkpoint.
 *
 * <p>Batches are tagged with the checkpoint whose barrier releases them here, not with the id the writer used. That
 * matters at end of input: every writer tags its final files {@code Long.MAX_VALUE}, and writers finish at different
 * checkpoints; merging by the aggregator's own barrier (and at its own end of input) keeps every writer's last files.
 * The operator holds nothing across a barrier, so it has no state.
 */
final class FileBatchAggregator extends AbstractStreamOperator<CommittableMessage<FileBatch>>
    implements OneInputStreamOperator<CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>, BoundedOneInput {
  private final List<FileBatch> pending = new ArrayList<>();
  private long lastCheckpointId;

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
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
    FileBatch merged = FileBatch.merge(checkpointId, pending);
    pending.clear();
    output.collect(new StreamRecord<>(new CommittableSummary<>(0, 1, checkpointId, 1, 0)));
    output.collect(new StreamRecord<>(new CommittableWithLineage<>(merged, checkpointId, 0)));
  }
}
