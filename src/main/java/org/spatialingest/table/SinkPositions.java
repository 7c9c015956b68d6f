package org.spatialingest.table;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The positions one commit of one sink recorded ({@link TablePositions}): per Kafka source key
 * ({@link SourceKeys}), the offset below which every record is committed, and which Kafka they were
 * taken from.
 *
 * @param sinkId the sink ({@code sink.id}) that wrote them; null for formats 1 and 2, which any
 *     sink reads as its own (older releases had one sink per table)
 * @param ids the cluster and topic ids they were taken from; unknown for formats 1 and 2
 * @param offsets per Kafka source key, the position
 * @param snapshotId the snapshot whose summary holds them
 */
@PublicEvolving
public record SinkPositions(
    String sinkId, KafkaIds ids, Map<String, Long> offsets, long snapshotId) {
  public SinkPositions {
    offsets = Map.copyOf(offsets);
  }

  /** Whether the positions name their cluster (format 3), so a cluster change can be told. */
  public boolean knowsCluster() {
    return ids.clusterId() != null;
  }

  /** Whether these positions were taken from another cluster than {@code current}'s. */
  public boolean otherCluster(KafkaIds current) {
    return ids.clusterId() != null
        && current.clusterId() != null
        && !ids.clusterId().equals(current.clusterId());
  }

  /**
   * Whether {@code topic} has another id now than when these positions were taken (deleted and
   * created again); false when either id is unknown.
   */
  public boolean topicRecreated(String topic, KafkaIds current) {
    return ids.topicRecreated(topic, current);
  }

  /**
   * The positions that apply to {@code current}: none from another cluster, none of a topic that
   * has another id now; positions whose ids are unknown (formats 1 and 2) apply.
   */
  public Map<String, Long> applicableTo(KafkaIds current) {
    if (otherCluster(current)) {
      return Map.of();
    }
    Map<String, Long> applicable = new HashMap<>();
    offsets.forEach(
        (key, offset) -> {
          if (!topicRecreated(SourceKeys.topic(key), current)) {
            applicable.put(key, offset);
          }
        });
    return applicable;
  }

  /** Whether these positions are this sink's: written by it, or by a release without sink ids. */
  public boolean ofSink(String id) {
    return sinkId == null || Objects.equals(sinkId, id);
  }
}
