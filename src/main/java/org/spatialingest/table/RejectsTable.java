package org.spatialingest.table;

import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Types;

/**
 * The rejects table ({@code <table>_rejects}, same catalog and namespace): every record that did
 * not become a telemetry row, with its bytes, where it came from and why. Written by a second
 * {@code BoundedIcebergSink}, so it is exactly-once by the same mechanism. Partitioned by day of
 * {@code ingest_time} (the record's Kafka timestamp, or the time a file line was read); no sort
 * order.
 */
public final class RejectsTable {
  public static final int RAW = 0;
  public static final int RAW_SIZE = 1;
  public static final int REASON = 2;
  public static final int MESSAGE = 3;
  public static final int TOPIC = 4;
  public static final int PARTITION = 5;
  public static final int OFFSET = 6;
  public static final int FILE = 7;
  public static final int LINE = 8;
  public static final int INGEST_TIME = 9;
  public static final int REJECTED_AT = 10;
  public static final int FIELD_COUNT = 11;

  public static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(
              1,
              "raw",
              Types.BinaryType.get(),
              "the record as received; for record_too_large only its first transform.max-record-bytes bytes"),
          Types.NestedField.required(
              2, "raw_size", Types.LongType.get(), "size of the record as received, in bytes"),
          Types.NestedField.required(
              3, "reason", Types.StringType.get(), "reject reason code, e.g. malformed_json"),
          Types.NestedField.optional(4, "message", Types.StringType.get()),
          Types.NestedField.optional(
              5, "topic", Types.StringType.get(), "Kafka topic (null for a file record)"),
          Types.NestedField.optional(6, "partition", Types.IntegerType.get()),
          Types.NestedField.optional(7, "offset", Types.LongType.get()),
          Types.NestedField.optional(
              8, "file", Types.StringType.get(), "source file (null for a Kafka record)"),
          Types.NestedField.optional(
              9, "line", Types.LongType.get(), "1-based line number in the file"),
          Types.NestedField.required(
              10,
              "ingest_time",
              Types.TimestampType.withZone(),
              "Kafka record timestamp, or when the file line was read"),
          Types.NestedField.required(
              11, "rejected_at", Types.TimestampType.withZone(), "when the transform rejected it"));

  public static final RowType ROW_TYPE = FlinkSchemaUtil.convert(SCHEMA);

  /**
   * Partitioned by the ingest time (a reject may have no valid event time), freshness from the same
   * field.
   */
  public static final TableLayout LAYOUT =
      new TableLayout(
          SCHEMA, "ingest_time", INGEST_TIME, null, null, new OriginPositions(), null, null);

  /** A reject's source position is its Kafka topic, partition and offset, or its file and line. */
  private static final class OriginPositions implements SourcePositionReader {
    @Override
    public StringData key(RowData row) {
      if (!row.isNullAt(TOPIC)) {
        return StringData.fromString(
            SourceKeys.kafka(row.getString(TOPIC).toString(), row.getInt(PARTITION)));
      }
      return row.isNullAt(FILE)
          ? null
          : StringData.fromString(SourceKeys.file(row.getString(FILE).toString()));
    }

    @Override
    public long position(RowData row) {
      return row.isNullAt(TOPIC) ? row.getLong(LINE) : row.getLong(OFFSET);
    }
  }

  private RejectsTable() {}
}
