package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * event_time at both ends of 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z, as epoch millis and as
 * ISO-8601.
 */
class EventTimeTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long FIRST = Instant.parse("0001-01-01T00:00:00Z").toEpochMilli();
  private static final long LAST = Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli();

  @Test
  void theRangeIsYears0001To9999() {
    assertThat(EventTime.MIN_MILLIS).isEqualTo(FIRST);
    assertThat(EventTime.MAX_MILLIS).isEqualTo(LAST);
    assertThat(EventTime.RANGE)
        .isEqualTo(Instant.ofEpochMilli(FIRST) + ".." + Instant.ofEpochMilli(LAST));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "-62135596800000",
        "\"0001-01-01T00:00:00Z\"",
        "\"0001-01-01T00:00:00.000000000Z\"",
        "\"0001-01-01T01:00:00+01:00\"",
        "\"0000-12-31T23:00:00-01:00\""
      })
  void theFirstMillisecondIsAccepted(String json) throws Exception {
    assertThat(EventTime.millis(node(json))).isEqualTo(FIRST);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "253402300799999",
        "\"9999-12-31T23:59:59.999Z\"",
        "\"9999-12-31T23:59:59.999999999Z\"",
        "\"9999-12-31T22:59:59.999-01:00\"",
        "\"+10000-01-01T00:59:59.999+01:00\""
      })
  void theLastMillisecondIsAccepted(String json) throws Exception {
    assertThat(EventTime.millis(node(json))).isEqualTo(LAST);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "-62135596800001",
        "253402300800000",
        "1000000000000000000",
        "-1000000000000000000",
        "9223372036854775807",
        "100000000000000000000000",
        "\"0000-12-31T23:59:59.999Z\"",
        "\"0000-12-31T23:59:59.999999999Z\"",
        "\"+10000-01-01T00:00:00Z\"",
        "\"0001-01-01T00:59:59.999+01:00\"",
        "\"9999-12-31T23:59:59-00:01\"",
        "\"+300000000-01-01T00:00:00Z\"",
        "\"-999999999-01-01T00:00:00Z\""
      })
  void justOutsideAndFarOutsideAreRejectedWithTheRange(String json) {
    RecordRejectedException e =
        catchThrowableOfType(RecordRejectedException.class, () -> EventTime.millis(node(json)));
    assertThat(e).as(json).isNotNull();
    assertThat(e.reason()).isEqualTo(RejectReason.INVALID_TIME);
    assertThat(e.getMessage())
        .contains("is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999Z");
  }

  /**
   * Why the range is needed: the sink converts TimestampData to Iceberg micros (millis × 1000,
   * unchecked) through RowDataWrapper and partitions by day/hour; both ends convert exactly, the
   * value users sent (1e18 ms) wrapped.
   */
  @Test
  void bothEndsSurviveTheSinksConversionAndPartitionTransforms() {
    Schema schema = new Schema(Types.NestedField.required(1, "t", Types.TimestampType.withZone()));
    RowDataWrapper wrapper = new RowDataWrapper(FlinkSchemaUtil.convert(schema), schema.asStruct());
    Types.TimestampType type = Types.TimestampType.withZone();
    long[] ends = {FIRST, LAST};
    String[] days = {"0001-01-01", "9999-12-31"};
    String[] hours = {"0001-01-01-00", "9999-12-31-23"};
    for (int i = 0; i < ends.length; i++) {
      long micros = micros(wrapper, ends[i]);
      assertThat(micros).isEqualTo(ends[i] * 1000);
      assertThat(
              Transforms.day()
                  .toHumanString(type, (Integer) Transforms.day().bind(type).apply(micros)))
          .isEqualTo(days[i]);
      assertThat(
              Transforms.hour()
                  .toHumanString(type, (Integer) Transforms.hour().bind(type).apply(micros)))
          .isEqualTo(hours[i]);
    }
    long wrapped = micros(wrapper, 1_000_000_000_000_000_000L);
    assertThat(wrapped / 1000).isNotEqualTo(1_000_000_000_000_000_000L); // what the range keeps out
  }

  private static long micros(RowDataWrapper wrapper, long millis) {
    GenericRowData row = new GenericRowData(1);
    row.setField(0, TimestampData.fromEpochMillis(millis));
    return wrapper.wrap(row).get(0, Long.class);
  }

  @Test
  void otherShapesKeepTheirReasons() {
    assertThat(reason("null")).isEqualTo(RejectReason.MISSING_TIME);
    assertThat(reason("1.5")).isEqualTo(RejectReason.INVALID_TIME);
    assertThat(reason("\"2026-11-29T10:00:00\"")).isEqualTo(RejectReason.INVALID_TIME);
    assertThat(reason("true")).isEqualTo(RejectReason.INVALID_TIME);
  }

  private static RejectReason reason(String json) {
    return catchThrowableOfType(RecordRejectedException.class, () -> EventTime.millis(node(json)))
        .reason();
  }

  private static JsonNode node(String json) throws Exception {
    return JSON.readTree(json);
  }
}
