package org.spatialingest.source;

import org.apache.flink.annotation.PublicEvolving;

/**
 * One raw input record and where it came from: a Kafka topic/partition/offset, or a file and line.
 * The payload stays bytes until the transform parses it, so a record that is not even JSON still
 * reaches the transform (and the rejects table) instead of failing the source.
 *
 * <p>A Flink POJO (public fields, no-arg constructor) so it serializes without Kryo.
 */
@PublicEvolving
public class SourceRecord {
  public byte[] value;

  /** Kafka topic; null for a file record. */
  public String topic;

  public int partition;
  public long offset;

  /**
   * Kafka record timestamp in epoch millis (for a file record: when it was read): the ingress time.
   */
  public long timestamp;

  /** File path; null for a Kafka record. */
  public String file;

  /** 1-based line number in {@link #file}. */
  public long line;

  /** The source key ({@code SourceKeys}): {@code <topic>/<partition>}, or {@code file:<path>}. */
  public String source;

  public SourceRecord() {}

  public SourceRecord(byte[] value, String topic, int partition, long offset, long timestamp) {
    this.value = value;
    this.topic = topic;
    this.partition = partition;
    this.offset = offset;
    this.timestamp = timestamp;
  }

  public static SourceRecord fromFile(byte[] value, String file, long line, long readMillis) {
    SourceRecord r = new SourceRecord(value, null, -1, -1, readMillis);
    r.file = file;
    r.line = line;
    return r;
  }

  /** The record's position in its source: the Kafka offset, or the file line. */
  public long position() {
    return topic == null ? line : offset;
  }

  /**
   * Where the record came from, for logs and rejects: {@code topic/partition@offset} or {@code
   * file:line}.
   */
  public String origin() {
    return topic == null && file != null
        ? file + ":" + line
        : topic + "/" + partition + "@" + offset;
  }
}
