package org.spatialingest.source;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;
import org.apache.flink.api.common.JobInfo;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.kafka.sink.KafkaCommittable;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaWriterState;
import org.apache.flink.connector.kafka.sink.TwoPhaseCommittingStatefulSink;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.flink.util.function.ThrowingRunnable;

/**
 * A {@link KafkaSink} (the dead-letter producer) whose authentication and authorization failures
 * count toward the same bound as the source's ({@link KafkaAccessGuard}): the third failure in a
 * row of one writer subtask, each within {@link KafkaAccessGuard#STREAK_WINDOW} of the one before,
 * ends the job with a {@link KafkaAccessLostException} instead of another restart.
 *
 * <p>The Kafka writer reports a failed send from the producer's callback through the task's mailbox
 * (and on the next write or flush), so both the writer's calls and the mails it submits go through
 * the guard. Everything else (writer state, committables, serializers) is the wrapped sink's own,
 * so savepoints of either restore into the other.
 */
public final class GuardedKafkaSink<IN>
    implements TwoPhaseCommittingStatefulSink<IN, KafkaWriterState, KafkaCommittable>,
        SupportsPostCommitTopology<KafkaCommittable> {
  private final KafkaSink<IN> delegate;

  private GuardedKafkaSink(KafkaSink<IN> delegate) {
    this.delegate = delegate;
  }

  public static <IN> GuardedKafkaSink<IN> of(KafkaSink<IN> sink) {
    return new GuardedKafkaSink<>(sink);
  }

  @Override
  public PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> createWriter(
      WriterInitContext context) throws IOException {
    GuardedContext guarded = new GuardedContext(context);
    return new GuardedWriter<>(delegate.createWriter(guarded), guarded.key);
  }

  @Override
  public PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> restoreWriter(
      WriterInitContext context, Collection<KafkaWriterState> recoveredState) throws IOException {
    GuardedContext guarded = new GuardedContext(context);
    return new GuardedWriter<>(delegate.restoreWriter(guarded, recoveredState), guarded.key);
  }

  @Override
  public SimpleVersionedSerializer<KafkaWriterState> getWriterStateSerializer() {
    return delegate.getWriterStateSerializer();
  }

  @Override
  public Committer<KafkaCommittable> createCommitter(CommitterInitContext context)
      throws IOException {
    return delegate.createCommitter(context);
  }

  @Override
  public SimpleVersionedSerializer<KafkaCommittable> getCommittableSerializer() {
    return delegate.getCommittableSerializer();
  }

  @Override
  public void addPostCommitTopology(DataStream<CommittableMessage<KafkaCommittable>> committables) {
    delegate.addPostCommitTopology(committables);
  }

  /** {@code failure} as the guard sees it: an access failure counted, anything else as it is. */
  private static Exception guard(String key, Exception failure) {
    RuntimeException refused = KafkaAccessGuard.accessFailure(key, failure);
    return refused != null ? refused : failure;
  }

  private static final class GuardedWriter<IN>
      implements PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> {
    private final PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> delegate;
    private final String key;

    GuardedWriter(
        PrecommittingStatefulSinkWriter<IN, KafkaWriterState, KafkaCommittable> delegate,
        String key) {
      this.delegate = delegate;
      this.key = key;
    }

    @Override
    public void write(IN element, Context context) throws IOException, InterruptedException {
      try {
        delegate.write(element, context);
      } catch (IOException | RuntimeException e) {
        throw rethrow(e);
      }
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
      try {
        delegate.flush(endOfInput);
      } catch (IOException | RuntimeException e) {
        throw rethrow(e);
      }
    }

    private IOException rethrow(Exception e) {
      Exception guarded = guard(key, e);
      if (guarded instanceof RuntimeException r) {
        throw r;
      }
      return (IOException) guarded;
    }

    @Override
    public void writeWatermark(Watermark watermark) throws IOException, InterruptedException {
      delegate.writeWatermark(watermark);
    }

    @Override
    public List<KafkaWriterState> snapshotState(long checkpointId) throws IOException {
      return delegate.snapshotState(checkpointId);
    }

    @Override
    public Collection<KafkaCommittable> prepareCommit() throws IOException, InterruptedException {
      return delegate.prepareCommit();
    }

    @Override
    public void close() throws Exception {
      delegate.close();
    }
  }

  /** The writer's context, whose mailbox runs every mail through the guard. */
  private static final class GuardedContext implements WriterInitContext {
    private final WriterInitContext delegate;
    private final String key;
    private final MailboxExecutor mailbox;

    GuardedContext(WriterInitContext delegate) {
      this.delegate = delegate;
      this.key =
          delegate.getJobInfo().getJobId()
              + "/dead-letter-"
              + delegate.getTaskInfo().getIndexOfThisSubtask();
      this.mailbox = new GuardedMailbox(delegate.getMailboxExecutor(), key);
    }

    @Override
    public UserCodeClassLoader getUserCodeClassLoader() {
      return delegate.getUserCodeClassLoader();
    }

    @Override
    public MailboxExecutor getMailboxExecutor() {
      return mailbox;
    }

    @Override
    public ProcessingTimeService getProcessingTimeService() {
      return delegate.getProcessingTimeService();
    }

    @Override
    public SinkWriterMetricGroup metricGroup() {
      return delegate.metricGroup();
    }

    @Override
    public SerializationSchema.InitializationContext asSerializationSchemaInitializationContext() {
      return delegate.asSerializationSchemaInitializationContext();
    }

    @Override
    public boolean isObjectReuseEnabled() {
      return delegate.isObjectReuseEnabled();
    }

    @Override
    public <T> TypeSerializer<T> createInputSerializer() {
      return delegate.createInputSerializer();
    }

    @Override
    public <MetaT> Optional<Consumer<MetaT>> metadataConsumer() {
      return delegate.metadataConsumer();
    }

    @Override
    public OptionalLong getRestoredCheckpointId() {
      return delegate.getRestoredCheckpointId();
    }

    @Override
    public JobInfo getJobInfo() {
      return delegate.getJobInfo();
    }

    @Override
    public TaskInfo getTaskInfo() {
      return delegate.getTaskInfo();
    }
  }

  private static final class GuardedMailbox implements MailboxExecutor {
    private final MailboxExecutor delegate;
    private final String key;

    GuardedMailbox(MailboxExecutor delegate, String key) {
      this.delegate = delegate;
      this.key = key;
    }

    @Override
    public void execute(
        MailOptions options,
        ThrowingRunnable<? extends Exception> command,
        String description,
        Object... args) {
      delegate.execute(
          options,
          () -> {
            try {
              command.run();
            } catch (Exception e) {
              throw guard(key, e);
            }
          },
          description,
          args);
    }

    @Override
    public void yield() throws InterruptedException {
      delegate.yield();
    }

    @Override
    public boolean tryYield() {
      return delegate.tryYield();
    }

    @Override
    public boolean shouldInterrupt() {
      return delegate.shouldInterrupt();
    }
  }
}
