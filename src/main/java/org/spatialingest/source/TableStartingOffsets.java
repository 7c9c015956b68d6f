package org.spatialingest.source;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.StartPositions;

/**
 * Where a Kafka source without restored state starts, in every {@code kafka.starting-offsets} mode:
 * each partition the table has a position for ({@link StartPositions}, decided where the job was
 * built) starts exactly there; a partition without one, of a topic the table has positions of
 * (added since, or the topic created again), from its start; any other by the mode's own rule
 * ({@code table}, {@code earliest}: the first offset; {@code committed}: the group's offset, the
 * first offset if none; {@code latest}: the end). Where the job is built every partition is
 * resolved so ({@link StartCheck#decide}), so the sink's first commit records a position even for
 * one that delivers nothing. A {@code kafka.reset-positions} that applies starts every partition by
 * it. Every offset is resolved here, so the consumer never needs its own {@code auto.offset.reset}:
 * with {@code kafka.on-gap: fail} it is {@code none}, and an offset Kafka no longer has fails the
 * reader ({@link KafkaGapGuard}) instead of jumping.
 *
 * <p>A position below the first offset Kafka keeps (deleted after the job was built) is refused
 * with {@code fail} and starts at the first offset with {@code continue}; one past the end (a topic
 * created again, with positions of an older release that do not know the topic id) starts at the
 * end, with a WARN.
 */
final class TableStartingOffsets implements OffsetsInitializer {
  private static final Logger LOG = LoggerFactory.getLogger(TableStartingOffsets.class);

  private final StartPositions start;
  private final JobConfig.StartingOffsets mode;
  private final JobConfig.OnGap onGap;
  private final Instant resetInstant;

  TableStartingOffsets(StartPositions start, JobConfig config) {
    this.start = start;
    this.mode = config.startingOffsets();
    this.onGap = config.onGap();
    this.resetInstant = start.reset().isEmpty() ? null : config.resetPositionsInstant();
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Set<String> readBefore = new HashSet<>();
    start.positions().keySet().forEach(k -> readBefore.add(SourceKeys.topic(k)));
    return resolve(readBefore, partitions, retriever);
  }

  /**
   * The starting offset of each of {@code partitions}: its position in {@code start}; without one,
   * from its start if its topic is in {@code readBefore} (the sink read the topic before: a
   * partition added since, or the topic created again), else by the mode's own rule (or the
   * reset's). Used where the job is built, for every partition ({@link StartCheck#decide}), and by
   * the enumerator for partitions that appeared since.
   */
  static Map<TopicPartition, Long> resolve(
      StartPositions start,
      JobConfig config,
      Set<String> readBefore,
      Collection<TopicPartition> partitions,
      PartitionOffsetsRetriever retriever) {
    return new TableStartingOffsets(start, config).resolve(readBefore, partitions, retriever);
  }

  private Map<TopicPartition, Long> resolve(
      Set<String> readBefore,
      Collection<TopicPartition> partitions,
      PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> offsets = new HashMap<>();
    List<TopicPartition> rest = new ArrayList<>();
    List<TopicPartition> added = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      Long position = start.positions().get(SourceKeys.kafka(tp.topic(), tp.partition()));
      if (position != null) {
        offsets.put(tp, position);
      } else if (start.reset().isEmpty() && readBefore.contains(tp.topic())) {
        added.add(tp);
      } else {
        rest.add(tp);
      }
    }
    if (!added.isEmpty()) {
      Map<TopicPartition, Long> first = retriever.beginningOffsets(added);
      LOG.info(
          "Starting {} partitions of topics the table has positions of, but not of them (added since,"
              + " or the topic created again), from their start: {}",
          first.size(),
          first);
      offsets.putAll(first);
    }
    if (offsets.size() > added.size()) {
      clamp(offsets, retriever);
      LOG.info(
          "Starting {} partitions at the positions decided at the start (the table's, or resolved where the job was built): {}",
          offsets.size(),
          offsets);
    }
    if (!rest.isEmpty()) {
      Map<TopicPartition, Long> own = ownRule(rest, retriever);
      LOG.info(
          "Starting {} partitions the table has no position for by {}: {}",
          own.size(),
          start.reset().isEmpty()
              ? "kafka.starting-offsets " + mode
              : "kafka.reset-positions " + start.reset(),
          own);
      offsets.putAll(own);
    }
    return offsets;
  }

  /** The offsets of the mode's own rule (or the reset's), resolved. */
  private Map<TopicPartition, Long> ownRule(
      List<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> first = retriever.beginningOffsets(partitions);
    if (!start.reset().isEmpty()) {
      if (start.reset().equals("latest")) {
        return new HashMap<>(retriever.endOffsets(partitions));
      }
      if (resetInstant == null) {
        return new HashMap<>(first);
      }
      Map<TopicPartition, Long> times = new HashMap<>();
      partitions.forEach(tp -> times.put(tp, resetInstant.toEpochMilli()));
      Map<TopicPartition, Long> end = retriever.endOffsets(partitions);
      Map<TopicPartition, Long> out = new HashMap<>();
      retriever
          .offsetsForTimes(times)
          .forEach((tp, found) -> out.put(tp, found == null ? end.get(tp) : found.offset()));
      return out;
    }
    return switch (mode) {
      case TABLE, EARLIEST -> new HashMap<>(first);
      case LATEST -> new HashMap<>(retriever.endOffsets(partitions));
      case COMMITTED -> {
        Map<TopicPartition, Long> out = new HashMap<>(first);
        Map<TopicPartition, Long> committed = new HashMap<>();
        committed(partitions, retriever)
            .forEach(
                (tp, offset) -> {
                  if (offset != null && offset >= 0) {
                    committed.put(tp, offset);
                  }
                });
        clamp(committed, retriever); // a group offset below the first one is a gap too
        out.putAll(committed);
        yield out;
      }
    };
  }

  private static Map<TopicPartition, Long> committed(
      List<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    try {
      return retriever.committedOffsets(partitions);
    } catch (RuntimeException e) {
      // no committed offsets for the group at all
      LOG.info("No committed offsets of the group: {}", e.toString());
      return Map.of();
    }
  }

  /**
   * Offsets below the first one Kafka keeps are a gap (refused with {@code kafka.on-gap: fail});
   * past the end: the topic was created again (positions without topic ids).
   */
  private void clamp(Map<TopicPartition, Long> offsets, PartitionOffsetsRetriever retriever) {
    if (offsets.isEmpty()) {
      return;
    }
    Map<TopicPartition, Long> beginning = retriever.beginningOffsets(offsets.keySet());
    Map<TopicPartition, Long> end = retriever.endOffsets(offsets.keySet());
    offsets.replaceAll(
        (tp, position) -> {
          long first = beginning.getOrDefault(tp, 0L);
          long last = end.getOrDefault(tp, Long.MAX_VALUE);
          if (position < first) {
            String gap = KafkaGapGuard.describe(tp.topic(), tp.partition(), position, first);
            if (onGap == JobConfig.OnGap.FAIL) {
              throw new PositionsRefusedException(
                  "Refusing to start: records were deleted from Kafka before they were committed: "
                      + gap
                      + ". "
                      + KafkaGapGuard.WAYS_OUT);
            }
            LOG.warn("{}; kafka.on-gap is continue: going on from {}", gap, first);
            return first;
          }
          if (position > last) {
            LOG.warn(
                "{}: the table's position {} is past the partition's end {} (was the topic recreated?); starting at "
                    + "the end",
                tp,
                position,
                last);
            return last;
          }
          return position;
        });
  }

  @Override
  public OffsetResetStrategy getAutoOffsetResetStrategy() {
    // every start offset is resolved above; a restored offset Kafka no longer has is a gap
    return onGap == JobConfig.OnGap.FAIL ? OffsetResetStrategy.NONE : OffsetResetStrategy.EARLIEST;
  }
}
