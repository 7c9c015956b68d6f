package org.spatialingest.source;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Keeps the Kafka value bytes, coordinates and timestamp; never fails, so bad payloads cannot stall the source. */
public final class SourceRecordDeserializer implements KafkaRecordDeserializationSchema<SourceRecord> {
  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<SourceRecord> out) {
    byte[] value = record.value() == null ? new byte[0] : record.value();
    out.collect(new SourceRecord(value, record.topic(), record.partition(), record.offset(), record.timestamp()));
  }

  @Override
  public TypeInformation<SourceRecord> getProducedType() {
    return TypeInformation.of(SourceRecord.class);
  }
}
