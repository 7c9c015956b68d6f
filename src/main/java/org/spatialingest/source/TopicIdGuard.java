package org.spatialingest.source;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * Stops the job when a topic it reads is deleted and created again under its name while it runs, or
 * between a checkpoint and the restart that restores it (KIP-516: the new topic has a new topic
 * id). The readers' offsets are the old topic's: on the new one they would skip every record below
 * them, or fall past its end (which the consumer reports as out of range, not a re-creation). The
 * Kafka source cannot move a running reader's splits back to the start, and a start without state
 * already does that right ({@link StartCheck}: the new topic from its start, {@link
 * SnapshotSummaryKeys#POSITIONS_RESET} in the first commit), so the job stops with a
 * non-recoverable {@link PositionsRefusedException} naming the topic, both ids and that way out.
 *
 * <p>Each reader asks Kafka for the topic ids ({@code Admin.describeTopics}) when a checkpoint
 * comes after it emitted records (in {@code snapshotState}, so before any commit can include them),
 * at the end of a bounded input, and when the wrapped reader fails (an out-of-range offset on a
 * topic created again with fewer records). Topic ids never return, so an id still the one the job
 * started with ({@link KafkaIds}, decided where the job is built) means every record emitted before
 * the look-up came from the old topic. A topic that is gone (deleted, not created yet) passes: what
 * was read came from the old topic. Cost: one look-up per checkpoint per reader subtask that
 * emitted records since the last one, one call per record to note that it did; none while idle.
 * Caveat: with several brokers, the broker answering the look-up may learn of the new topic a
 * moment after the partition leader.
 */
public final class TopicIdGuard<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  private static final Logger LOG = LoggerFactory.getLogger(TopicIdGuard.class);
  private static final long LOOKUP_TIMEOUT_S = 30;

  private final Map<String, String> connection;
  private final KafkaIds expected;

  private TopicIdGuard(
      Source<T, SplitT, EnumT> delegate, Map<String, String> connection, KafkaIds expected) {
    super(delegate);
    this.connection = new HashMap<>(connection);
    this.expected = expected;
  }

  /**
   * @param connection the job's client properties ({@link KafkaClients#connection})
   * @param expected the topic ids the job started with; the source itself when it knows none
   */
  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> of(
      Source<T, SplitT, EnumT> source, Map<String, String> connection, KafkaIds expected) {
    if (expected.topicIds().isEmpty()) {
      return source;
    }
    return new TopicIdGuard<>(source, connection, expected);
  }

  /**
   * The refusal for a topic created again under the job's offsets; one message for a running job
   * and a refused restore.
   *
   * @param what what is refused, e.g. "Stopping" or "Refusing to restore"
   */
  static PositionsRefusedException recreated(
      String what, String topic, String oldId, String newId) {
    return new PositionsRefusedException(
        what
            + ": topic "
            + topic
            + " was deleted and created again (topic id "
            + oldId
            + " -> "
            + newId
            + "). The offsets the job holds are the old topic's: on the new one they would skip its "
            + "records below them (or fall past its end); nothing of the new topic is committed. Way out: "
            + "start the job without state (no savepoint or checkpoint): the new topic is read from its "
            + "start and the first commit records "
            + SnapshotSummaryKeys.POSITIONS_RESET
            + " with both ids. Records of the old topic that the table had not committed were deleted "
            + "with it (inspect shows the table's positions)");
  }

  /** The refusal of a restore whose offsets are of another Kafka cluster than the job reads. */
  static PositionsRefusedException otherClusterAtRestore(String stateCluster, String jobCluster) {
    return new PositionsRefusedException(
        "Refusing to restore: the state's offsets are of Kafka cluster "
            + stateCluster
            + ", not of "
            + jobCluster
            + "; kafka.reset-positions applies to a start without state only: start without state");
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
    return new GuardedReader<>(delegate.createReader(context), connection, expected);
  }

  private static final class GuardedReader<T, SplitT extends SourceSplit>
      extends ForwardingSourceReader<T, SplitT> {
    private final Map<String, String> connection;
    private final KafkaIds expected;
    private final ObservingReaderOutput<T> output = new ObservingReaderOutput<>(r -> emitted());

    /** records were emitted since the last look-up that found the ids unchanged */
    private boolean unverified;

    /** the refusal once the ids changed; every later call fails with it */
    private PositionsRefusedException refused;

    private Admin admin;

    GuardedReader(
        SourceReader<T, SplitT> delegate, Map<String, String> connection, KafkaIds expected) {
      super(delegate);
      this.connection = connection;
      this.expected = expected;
    }

    private void emitted() {
      unverified = true;
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> target) throws Exception {
      if (refused != null) {
        throw refused;
      }
      InputStatus status;
      try {
        status = delegate.pollNext(output.to(target));
      } catch (Exception e) {
        PositionsRefusedException recreated =
            lookUpQuietly("when the reader failed: " + e.getClass().getSimpleName());
        if (recreated != null) {
          recreated.addSuppressed(e);
          throw recreated;
        }
        throw e;
      }
      if (status == InputStatus.END_OF_INPUT && unverified) {
        verify("the end of the input");
      }
      return status;
    }

    @Override
    public List<SplitT> snapshotState(long checkpointId) {
      if (refused != null) {
        throw refused;
      }
      if (unverified) {
        verify("checkpoint " + checkpointId);
      }
      return delegate.snapshotState(checkpointId);
    }

    /** Throws the refusal if a topic has another id now; a failed look-up fails the checkpoint. */
    private void verify(String before) {
      PositionsRefusedException recreated;
      try {
        recreated = lookUp("before " + before);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        throw new IllegalStateException(
            "cannot tell whether topic(s) "
                + expected.topicIds().keySet()
                + " were created again before "
                + before
                + " (their ids could not be read); not taking it",
            e);
      }
      if (recreated != null) {
        throw recreated;
      }
      unverified = false;
    }

    private PositionsRefusedException lookUpQuietly(String when) {
      try {
        return lookUp(when);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        LOG.debug("topic ids could not be read after a reader failure", e);
        return null;
      }
    }

    /** The refusal if a topic has another id than the job started with now, else null. */
    private PositionsRefusedException lookUp(String when) throws Exception {
      if (admin == null) {
        admin = Admin.create(KafkaClients.toProperties(connection));
      }
      Map<String, KafkaFuture<TopicDescription>> found =
          admin.describeTopics(expected.topicIds().keySet()).topicNameValues();
      for (Map.Entry<String, KafkaFuture<TopicDescription>> e : found.entrySet()) {
        String topic = e.getKey();
        String now;
        try {
          now = e.getValue().get(LOOKUP_TIMEOUT_S, TimeUnit.SECONDS).topicId().toString();
        } catch (ExecutionException gone) {
          if (gone.getCause() instanceof UnknownTopicOrPartitionException) {
            continue; // deleted and not created yet: what was read came from the old topic
          }
          throw gone;
        }
        if (expected.topicRecreated(topic, new KafkaIds(null, Map.of(topic, now)))) {
          refused = recreated("Stopping", topic, expected.topicId(topic), now);
          LOG.error("{} (found {})", refused.getMessage(), when);
          return refused;
        }
      }
      return null;
    }

    @Override
    public void close() throws Exception {
      try {
        super.close();
      } finally {
        if (admin != null) {
          admin.close(Duration.ofSeconds(5)); // not waiting on a look-up that timed out
          admin = null;
        }
      }
    }
  }
}
