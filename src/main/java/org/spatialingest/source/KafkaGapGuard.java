package org.spatialingest.source;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.iceberg.flink.TableLoader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.spatialingest.table.PositionsRefusedException;

/**
 * Turns a Kafka consumer's "offset no longer there" ({@link OffsetOutOfRangeException}, {@link
 * org.apache.kafka.clients.consumer.NoOffsetForPartitionException}) into a failure that names the
 * gap and ends the job. With {@code kafka.on-gap: fail} the source's {@code auto.offset.reset} is
 * {@code none} ({@link TableStartingOffsets}), so a restored offset that retention deleted raises
 * it instead of the consumer jumping silently. flink-connector-kafka 5.0's split reader lets it
 * through ({@code KafkaPartitionSplitReader.fetch} catches only wake-ups), the task fails, and a
 * restart would restore the same offset: the failure is non-recoverable ({@link
 * PositionsRefusedException}), so the job stops once with the message instead of restarting for
 * ever.
 */
public final class KafkaGapGuard<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  static final String WAYS_OUT =
      "Ways out: set kafka.on-gap: continue to go on from the first available offsets (each gap is "
          + "recorded in the snapshot summary and shown by inspect), after replaying the lost records from "
          + "elsewhere if they exist";

  private final Map<String, String> connection;

  /** with {@code kafka.on-gap: continue}: records the gaps met while running; else null */
  private final RunningGapRecorder recorder;

  private KafkaGapGuard(
      Source<T, SplitT, EnumT> delegate,
      Map<String, String> connection,
      RunningGapRecorder recorder) {
    super(delegate);
    this.connection = new HashMap<>(connection);
    this.recorder = recorder;
  }

  /**
   * @param connection the job's client properties ({@link KafkaClients#connection}), to look up the
   *     first offsets Kafka still has
   */
  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> of(
      Source<T, SplitT, EnumT> source, Map<String, String> connection) {
    return new KafkaGapGuard<>(source, connection, null);
  }

  /**
   * The same, and with {@code kafka.on-gap: continue} every gap the consumer goes past while
   * running is recorded ({@link RunningGapRecorder}) in {@code telemetry} as sink {@code sinkId}'s.
   */
  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> recording(
      Source<T, SplitT, EnumT> source,
      Map<String, String> connection,
      TableLoader telemetry,
      String sinkId) {
    return new KafkaGapGuard<>(
        source, connection, new RunningGapRecorder(telemetry, sinkId, connection));
  }

  /** One line naming a gap: topic, partition, first missing and first available offset. */
  static String describe(String topic, int partition, long missing, long available) {
    return "topic "
        + topic
        + " partition "
        + partition
        + ": first missing offset "
        + missing
        + ", first available offset "
        + available
        + ", "
        + (available - missing)
        + " records gone";
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
    RunningGapRecorder gaps = null;
    if (recorder != null) {
      gaps = new RunningGapRecorder(recorder);
      gaps.open(context.metricGroup().counter("kafkaGapRecords"));
    }
    return new GuardedReader<>(delegate.createReader(context), connection, gaps);
  }

  /** The gap behind {@code failure}, as a non-recoverable failure; null if it is none. */
  static RuntimeException gapFailure(Throwable failure, Map<String, String> connection) {
    InvalidOffsetException invalid = null;
    for (Throwable c = failure; c != null && invalid == null; c = c.getCause()) {
      if (c instanceof InvalidOffsetException e) {
        invalid = e;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    if (invalid == null) {
      return null;
    }
    InvalidOffsetException found = invalid;
    Map<TopicPartition, Long> missing =
        invalid instanceof OffsetOutOfRangeException out
            ? out.offsetOutOfRangePartitions()
            : Map.of();
    Map<TopicPartition, Long> first = new HashMap<>();
    try (Admin admin = Admin.create(KafkaClients.toProperties(connection))) {
      Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
      invalid.partitions().forEach(tp -> specs.put(tp, OffsetSpec.earliest()));
      admin
          .listOffsets(specs)
          .all()
          .get(30, TimeUnit.SECONDS)
          .forEach((tp, info) -> first.put(tp, info.offset()));
    } catch (Exception e) {
      // the message then names what the consumer said
    }
    List<String> gaps =
        invalid.partitions().stream()
            .sorted(java.util.Comparator.comparing(TopicPartition::toString))
            .map(
                tp ->
                    missing.containsKey(tp) && first.containsKey(tp)
                        ? describe(tp.topic(), tp.partition(), missing.get(tp), first.get(tp))
                        : "topic "
                            + tp.topic()
                            + " partition "
                            + tp.partition()
                            + ": "
                            + found.getMessage())
            .toList();
    PositionsRefusedException refused =
        new PositionsRefusedException(
            "Stopping: records the job still needs were deleted from Kafka (retention or "
                + "kafka-delete-records) before they were committed: "
                + String.join("; ", gaps)
                + ". "
                + WAYS_OUT
                + " and starting the job again without state");
    refused.initCause(failure);
    return refused;
  }

  private static final class GuardedReader<T, SplitT extends SourceSplit>
      extends ForwardingSourceReader<T, SplitT> {
    private final Map<String, String> connection;
    private final RunningGapRecorder gaps;
    private final ObservingReaderOutput<T> output = new ObservingReaderOutput<>(this::see);

    GuardedReader(
        SourceReader<T, SplitT> delegate, Map<String, String> connection, RunningGapRecorder gaps) {
      super(delegate);
      this.connection = connection;
      this.gaps = gaps;
    }

    @Override
    public void addSplits(List<SplitT> splits) {
      if (gaps != null) {
        for (SplitT split : splits) {
          if (split instanceof KafkaPartitionSplit kafka) {
            gaps.starts(kafka.getTopic(), kafka.getPartition(), kafka.getStartingOffset());
          }
        }
      }
      super.addSplits(splits);
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> target) throws Exception {
      try {
        if (gaps == null) {
          return delegate.pollNext(target);
        }
        return delegate.pollNext(output.to(target));
      } catch (Exception e) {
        RuntimeException gap = gapFailure(e, connection);
        throw gap != null ? gap : e;
      }
    }

    @Override
    public void close() throws Exception {
      try {
        super.close();
      } finally {
        if (gaps != null) {
          gaps.close();
        }
      }
    }

    private void see(T record) {
      if (record instanceof SourceRecord r) {
        gaps.next(r);
      }
    }
  }
}
