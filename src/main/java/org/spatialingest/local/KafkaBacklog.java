package org.spatialingest.local;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * How much of a topic the tables hold, from the broker's own offsets: records in the topic (end
 * minus start offsets; for a topic written by one non-transactional producer, the records produced)
 * and records not yet committed (end offsets minus the consumer group's offsets, which the sink
 * sets to the table's positions after every commit; a partition without an offset counts from its
 * start).
 */
public final class KafkaBacklog {
  private KafkaBacklog() {}

  /**
   * Records in the topic and records not yet committed to the tables ({@code unread} of the group).
   */
  public record Offsets(long records, long unread) {}

  public static Offsets read(Admin admin, String topic, String groupId)
      throws ExecutionException, InterruptedException {
    List<TopicPartition> partitions =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().stream()
            .map(p -> new TopicPartition(topic, p.partition()))
            .toList();
    Map<TopicPartition, Long> start = offsets(admin, partitions, OffsetSpec.earliest());
    Map<TopicPartition, Long> end = offsets(admin, partitions, OffsetSpec.latest());
    Map<TopicPartition, OffsetAndMetadata> committed =
        admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get();
    long records = 0;
    long unread = 0;
    for (TopicPartition p : partitions) {
      records += end.get(p) - start.get(p);
      OffsetAndMetadata position = committed.get(p);
      unread += end.get(p) - Math.max(start.get(p), position == null ? 0 : position.offset());
    }
    return new Offsets(records, unread);
  }

  private static Map<TopicPartition, Long> offsets(
      Admin admin, List<TopicPartition> partitions, OffsetSpec spec)
      throws ExecutionException, InterruptedException {
    Map<TopicPartition, ListOffsetsResultInfo> info =
        admin
            .listOffsets(
                partitions.stream().collect(Collectors.toMap(Function.identity(), p -> spec)))
            .all()
            .get();
    return info.entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
  }
}
