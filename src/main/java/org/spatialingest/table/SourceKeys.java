package org.spatialingest.table;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The one format of a source key, as stored in the telemetry table's {@code source} column and in
 * the positions of the snapshot summaries: {@code <topic>/<partition>} for a Kafka partition (topic
 * names cannot contain {@code /}), {@code file:<path>} for a file.
 */
@PublicEvolving
public final class SourceKeys {
  private static final String FILE_PREFIX = "file:";

  private SourceKeys() {}

  public static String kafka(String topic, int partition) {
    return kafkaPrefix(topic) + partition;
  }

  /** What every key of {@code topic}'s partitions starts with. */
  public static String kafkaPrefix(String topic) {
    return topic + "/";
  }

  public static String file(String path) {
    return FILE_PREFIX + path;
  }

  public static boolean isFile(String key) {
    return key.startsWith(FILE_PREFIX);
  }

  /** The topic of a Kafka key. */
  public static String topic(String kafkaKey) {
    return kafkaKey.substring(0, kafkaKey.lastIndexOf('/'));
  }

  /** The partition of a Kafka key. */
  public static int partition(String kafkaKey) {
    return Integer.parseInt(kafkaKey.substring(kafkaKey.lastIndexOf('/') + 1));
  }
}
