package org.spatialingest.table;

import java.io.Serializable;
import java.util.Map;

/**
 * Which Kafka the job reads: the cluster id ({@code Admin.describeCluster().clusterId()}) and, per
 * topic, its topic id ({@code TopicDescription.topicId()}), as strings. Recorded with the positions
 * (format 3 of {@link TablePositions}), so positions are applied only to the topic and cluster they
 * were taken from: a topic deleted and created again under its name has a new id, another cluster
 * another cluster id.
 *
 * @param clusterId null when unknown (file sources, positions of formats 1 and 2)
 * @param topicIds per topic name its id; a topic missing here has an unknown id
 */
public record KafkaIds(String clusterId, Map<String, String> topicIds) implements Serializable {
  public KafkaIds {
    topicIds = Map.copyOf(topicIds);
  }

  public static KafkaIds unknown() {
    return new KafkaIds(null, Map.of());
  }

  /** The topic's id, or null when unknown. */
  public String topicId(String topic) {
    return topicIds.get(topic);
  }

  /**
   * Whether {@code topic} has another id in {@code now} than here (deleted and created again);
   * false when either id is unknown. Topic ids are never reused, so equal ids mean the same topic.
   */
  public boolean topicRecreated(String topic, KafkaIds now) {
    String then = topicId(topic);
    String current = now.topicId(topic);
    return then != null && current != null && !then.equals(current);
  }
}
