package org.spatialingest.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.iceberg.flink.TableLoader;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TablePositions;

/**
 * Where a Kafka source without restored state starts: at the positions the table records ({@link
 * TablePositions}), below which every record is committed; a partition the table has no position
 * for starts as {@code fallback} says. Used by the enumerator at a fresh start only; a restore
 * takes its offsets from the checkpoint.
 */
final class TableStartingOffsets implements OffsetsInitializer {
  private static final Logger LOG = LoggerFactory.getLogger(TableStartingOffsets.class);

  private final TableLoader table;
  private final OffsetsInitializer fallback;

  TableStartingOffsets(TableLoader table, OffsetsInitializer fallback) {
    this.table = table;
    this.fallback = fallback;
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Map<String, Long> positions;
    try (TableLoader loader = table.clone()) {
      loader.open();
      positions = TablePositions.read(loader.loadTable());
    } catch (Exception e) {
      throw new IllegalStateException("cannot read the table's source positions to start from", e);
    }
    Map<TopicPartition, Long> offsets = new HashMap<>();
    List<TopicPartition> rest = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      Long position = positions.get(SourceKeys.kafka(tp.topic(), tp.partition()));
      if (position == null) {
        rest.add(tp);
      } else {
        offsets.put(tp, position);
      }
    }
    if (!offsets.isEmpty()) {
      clamp(offsets, retriever);
      LOG.info(
          "Starting {} partitions at the positions recorded in the table: {}",
          offsets.size(),
          offsets);
    }
    if (!rest.isEmpty()) {
      offsets.putAll(fallback.getPartitionOffsets(rest, retriever));
    }
    return offsets;
  }

  /**
   * Records below the earliest offset are gone (retention): say so loudly; past the end: the topic
   * was recreated.
   */
  private static void clamp(
      Map<TopicPartition, Long> offsets, PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> beginning = retriever.beginningOffsets(offsets.keySet());
    Map<TopicPartition, Long> end = retriever.endOffsets(offsets.keySet());
    offsets.replaceAll(
        (tp, position) -> {
          long first = beginning.getOrDefault(tp, 0L);
          long last = end.getOrDefault(tp, Long.MAX_VALUE);
          if (position < first) {
            LOG.warn(
                "{}: the table is complete below offset {}, but Kafka keeps only offsets from {}: records {}..{} were "
                    + "deleted by retention before they were committed",
                tp,
                position,
                first,
                position,
                first - 1);
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
    return fallback.getAutoOffsetResetStrategy();
  }
}
