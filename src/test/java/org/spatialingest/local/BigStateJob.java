package org.spatialingest.local;

import java.util.List;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * A small job on a local cluster whose one operator holds {@link #STATE_BYTES} of operator state,
 * more than JobManager (memory) checkpoint storage accepts (5 MiB). It runs until cancelled, one
 * record every 10 ms.
 */
final class BigStateJob {
  static final int STATE_BYTES = 8 << 20;

  private BigStateJob() {}

  /**
   * Submits the job at parallelism 1 to a new local cluster with {@code conf}; checkpoints every
   * 300 ms.
   */
  static JobClient start(Configuration conf) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
    env.enableCheckpointing(300);
    env.fromSequence(0, Long.MAX_VALUE).map(new SlowBigState()).sinkTo(new DiscardingSink<>());
    return env.executeAsync("big-state");
  }

  /** Passes numbers through slowly; snapshots an incompressible ballast array as its state. */
  static final class SlowBigState extends RichMapFunction<Long, Long>
      implements CheckpointedFunction {
    private transient byte[] ballast;
    private transient ListState<byte[]> state;

    @Override
    public Long map(Long value) {
      LockSupport.parkNanos(10_000_000);
      return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
      state.update(List.of(ballast));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
      state =
          context
              .getOperatorStateStore()
              .getListState(
                  new ListStateDescriptor<>("ballast", BytePrimitiveArraySerializer.INSTANCE));
      ballast = new byte[STATE_BYTES];
      new Random(42).nextBytes(ballast);
    }
  }
}
