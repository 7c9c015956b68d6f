package org.spatialingest.deadletter;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.table.data.RowData;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.spatialingest.table.RejectsTable;

/**
 * A rejects-table row as a dead-letter Kafka record: value = the raw bytes, cut to {@link
 * #MAX_VALUE_BYTES} so the record fits Kafka's default 1 MB limits (a larger one would fail the
 * producer and restart the job; the rejects table keeps the bytes); no key; headers {@code reason},
 * {@code message}, {@code raw-size} and the origin ({@code topic}, {@code partition}, {@code
 * offset} or {@code file}, {@code line}) as UTF-8 text. Timestamp = the ingest time.
 */
public final class DeadLetterSerializer implements KafkaRecordSerializationSchema<RowData> {
  public static final int MAX_VALUE_BYTES = 900_000;

  private final String topic;

  public DeadLetterSerializer(String topic) {
    this.topic = topic;
  }

  @Override
  public ProducerRecord<byte[], byte[]> serialize(
      RowData row, KafkaSinkContext context, Long timestamp) {
    RecordHeaders headers = new RecordHeaders();
    header(headers, "reason", row.getString(RejectsTable.REASON).toString());
    header(headers, "raw-size", Long.toString(row.getLong(RejectsTable.RAW_SIZE)));
    if (!row.isNullAt(RejectsTable.MESSAGE)) {
      header(headers, "message", row.getString(RejectsTable.MESSAGE).toString());
    }
    if (!row.isNullAt(RejectsTable.TOPIC)) {
      header(headers, "topic", row.getString(RejectsTable.TOPIC).toString());
      header(headers, "partition", Integer.toString(row.getInt(RejectsTable.PARTITION)));
      header(headers, "offset", Long.toString(row.getLong(RejectsTable.OFFSET)));
    }
    if (!row.isNullAt(RejectsTable.FILE)) {
      header(headers, "file", row.getString(RejectsTable.FILE).toString());
      header(headers, "line", Long.toString(row.getLong(RejectsTable.LINE)));
    }
    long ingest = row.getTimestamp(RejectsTable.INGEST_TIME, 6).getMillisecond();
    byte[] raw = row.getBinary(RejectsTable.RAW);
    if (raw.length > MAX_VALUE_BYTES) {
      raw = Arrays.copyOf(raw, MAX_VALUE_BYTES);
    }
    return new ProducerRecord<>(topic, null, ingest, null, raw, headers);
  }

  private static void header(RecordHeaders headers, String key, String value) {
    headers.add(key, value.getBytes(StandardCharsets.UTF_8));
  }
}
