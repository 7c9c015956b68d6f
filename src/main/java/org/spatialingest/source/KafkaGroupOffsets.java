package org.spatialingest.source;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.spatialingest.table.PositionsListener;
import org.spatialingest.table.SourceKeys;

/**
 * Publishes the table's positions as the consumer group's committed offsets after every commit, so the group's lag
 * is what the table is still missing (the Kafka source's own offset commits, which run ahead of the table by up to the
 * freshness bound, are switched off). The source assigns partitions without joining the group, so the group has no
 * members and its offsets can be set from here.
 */
public final class KafkaGroupOffsets implements PositionsListener {
  private final Map<String, String> kafkaProperties;
  private final String bootstrapServers;
  private final String groupId;
  private final String topic;
  private transient Admin admin;

  public KafkaGroupOffsets(String bootstrapServers, Map<String, String> kafkaProperties, String groupId,
      String topic) {
    this.bootstrapServers = bootstrapServers;
    this.kafkaProperties = new HashMap<>(kafkaProperties);
    this.groupId = groupId;
    this.topic = topic;
  }

  @Override
  public void committed(Map<String, Long> positions) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    positions.forEach((key, position) -> {
      if (!SourceKeys.isFile(key) && SourceKeys.topic(key).equals(topic)) {
        offsets.put(new TopicPartition(topic, SourceKeys.partition(key)), new OffsetAndMetadata(position));
      }
    });
    if (offsets.isEmpty()) {
      return;
    }
    if (admin == null) {
      Properties props = new Properties();
      props.putAll(kafkaProperties);
      props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
      admin = Admin.create(props);
    }
    admin.alterConsumerGroupOffsets(groupId, offsets).all().get(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    if (admin != null) {
      admin.close();
      admin = null;
    }
  }
}
