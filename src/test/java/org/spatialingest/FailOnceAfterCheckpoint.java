package org.spatialingest;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.spatialingest.source.SourceRecord;

/**
 * Passes records through slowly and throws once, after a checkpoint completed and some records went
 * by, so recovery restores real state. The flags are static: the MiniCluster runs in the test JVM,
 * one test at a time.
 */
public final class FailOnceAfterCheckpoint extends RichMapFunction<SourceRecord, SourceRecord>
    implements CheckpointListener {
  public static final AtomicBoolean FAILED = new AtomicBoolean();
  private static final AtomicBoolean CHECKPOINTED = new AtomicBoolean();
  private final long parkNanos;
  private final long afterRecords;
  private long seen;

  public FailOnceAfterCheckpoint(long parkNanos, long afterRecords) {
    this.parkNanos = parkNanos;
    this.afterRecords = afterRecords;
  }

  public static void reset() {
    FAILED.set(false);
    CHECKPOINTED.set(false);
  }

  @Override
  public SourceRecord map(SourceRecord value) {
    LockSupport.parkNanos(parkNanos);
    if (++seen > afterRecords && CHECKPOINTED.get() && FAILED.compareAndSet(false, true)) {
      throw new IllegalStateException("injected failure after a completed checkpoint");
    }
    return value;
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {
    CHECKPOINTED.set(true);
  }
}
