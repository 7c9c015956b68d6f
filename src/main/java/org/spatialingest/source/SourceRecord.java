package org.spatialingest.source;

/**
 * One raw input record and where it came from. The payload stays bytes until the transform parses it, so a record
 * that is not even JSON still reaches the transform (and its reject counter) instead of failing the source.
 *
 * <p>A Flink POJO (public fields, no-arg constructor) so it serializes without Kryo.
 */
public class SourceRecord {
  public byte[] value;
  public String topic;
  public int partition;
  public long offset;
  /** Kafka record timestamp in epoch millis: the ingress time of the pipeline. */
  public long timestamp;

  public SourceRecord() {}

  public SourceRecord(byte[] value, String topic, int partition, long offset, long timestamp) {
    this.value = value;
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.timestamp = timestamp;
  }

  /** Where the record came from, for logs and rejects: {@code topic/partition@offset}. */
  public String origin() {
    return topic + "/" + partition + "@" + offset;
  }
}
