package org.spatialingest.table;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;

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
@PublicEvolving
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

  /**
   * One line per id, for Flink state: the cluster id, then {@code topic<TAB>id} lines (topic names
   * hold neither tabs nor line breaks). {@link #decode} reads it.
   */
  public String encode() {
    StringBuilder text = new StringBuilder(clusterId == null ? "" : clusterId);
    new TreeMap<>(topicIds).forEach((t, id) -> text.append('\n').append(t).append('\t').append(id));
    return text.toString();
  }

  /** The ids {@link #encode} wrote. */
  public static KafkaIds decode(String text) {
    String[] lines = text.split("\n", -1);
    Map<String, String> topics = new HashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int tab = lines[i].indexOf('\t');
      topics.put(lines[i].substring(0, tab), lines[i].substring(tab + 1));
    }
    return new KafkaIds(lines[0].isEmpty() ? null : lines[0], topics);
  }
}
