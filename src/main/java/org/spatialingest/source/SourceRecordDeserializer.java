package org.spatialingest.source;

import java.util.Arrays;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.spatialingest.table.SourceKeys;

/**
 * Keeps the Kafka value bytes, coordinates and timestamp; never fails, so bad payloads cannot stall
 * the source.
 */
@PublicEvolving
public final class SourceRecordDeserializer
    implements KafkaRecordDeserializationSchema<SourceRecord> {
  /** source keys by partition, for the one topic seen last: no string built per record */
  private transient String keysTopic;

  private transient String[] keys;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<SourceRecord> out) {
    byte[] value = record.value() == null ? new byte[0] : record.value();
    SourceRecord r =
        new SourceRecord(
            value, record.topic(), record.partition(), record.offset(), record.timestamp());
    r.source = sourceKey(record.topic(), record.partition());
    out.collect(r);
  }

  private String sourceKey(String topic, int partition) {
    if (!topic.equals(keysTopic) || keys == null) {
      keysTopic = topic;
      keys = new String[Math.max(16, partition + 1)];
    }
    if (partition >= keys.length) {
      keys = Arrays.copyOf(keys, partition + 1);
    }
    String key = keys[partition];
    if (key == null) {
      key = SourceKeys.kafka(topic, partition);
      keys[partition] = key;
    }
    return key;
  }

  @Override
  public TypeInformation<SourceRecord> getProducedType() {
    return TypeInformation.of(SourceRecord.class);
  }
}
