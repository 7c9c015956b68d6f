package org.spatialingest.source;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

/**
 * Passes records through slowly and, once a checkpoint has completed and some records went by,
 * makes the next checkpoint fail once <em>in its asynchronous phase</em>: its operator state holds
 * a marker whose serializer throws when the state is written out. The task declines that checkpoint
 * ({@code CHECKPOINT_ASYNC_EXCEPTION}), Flink counts it against {@code
 * execution.checkpointing.tolerable-failed-checkpoints} (0 by default) and fails the whole job: a
 * <em>global</em> failover, which restores every operator coordinator — so the source's split
 * enumerator — from the last completed checkpoint. This is how the sink benchmark failed over when
 * its state exceeded the memory-storage limit. A task failure ({@code FailOnceAfterCheckpoint}, or
 * an exception in the synchronous part of a snapshot) restarts tasks but keeps the enumerator, so
 * it does not show FLINK-31006. The flags are static: the MiniCluster runs in the test JVM, one
 * test at a time.
 */
final class FailCheckpointOnce extends RichMapFunction<SourceRecord, SourceRecord>
    implements CheckpointedFunction, CheckpointListener {
  static final AtomicBoolean FAILED = new AtomicBoolean();
  private static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();
  private final long parkNanos;
  private final long afterRecords;
  private transient ListState<Boolean> marker;
  private long seen;

  FailCheckpointOnce(long parkNanos, long afterRecords) {
    this.parkNanos = parkNanos;
    this.afterRecords = afterRecords;
  }

  static void reset() {
    FAILED.set(false);
    CHECKPOINTED.set(false);
  }

  @Override
  public SourceRecord map(SourceRecord value) {
    LockSupport.parkNanos(parkNanos);
    seen++;
    return value;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    marker =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("fail-checkpoint-once", new FailingWhenTrue()));
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    boolean fail = seen > afterRecords && CHECKPOINTED.get() && FAILED.compareAndSet(false, true);
    marker.update(List.of(fail));
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    CHECKPOINTED.set(true);
  }

  /** Writes {@code false}; throws on {@code true}. Copies (the synchronous phase) never throw. */
  static final class FailingWhenTrue extends TypeSerializerSingleton<Boolean> {
    @Override
    public boolean isImmutableType() {
      return true;
    }

    @Override
    public Boolean createInstance() {
      return false;
    }

    @Override
    public Boolean copy(Boolean from) {
      return from;
    }

    @Override
    public Boolean copy(Boolean from, Boolean reuse) {
      return from;
    }

    @Override
    public int getLength() {
      return 1;
    }

    @Override
    public void serialize(Boolean record, DataOutputView target) throws IOException {
      if (record) {
        throw new IOException(
            "injected failure while writing checkpoint state (asynchronous phase)");
      }
      target.writeBoolean(false);
    }

    @Override
    public Boolean deserialize(DataInputView source) throws IOException {
      return source.readBoolean();
    }

    @Override
    public Boolean deserialize(Boolean reuse, DataInputView source) throws IOException {
      return source.readBoolean();
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
      target.writeBoolean(source.readBoolean());
    }

    @Override
    public TypeSerializerSnapshot<Boolean> snapshotConfiguration() {
      return new Snapshot();
    }

    /** Restores the serializer from checkpoints. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<Boolean> {
      public Snapshot() {
        super(FailingWhenTrue::new);
      }
    }
  }
}
