package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;

/**
 * {@code input.typed-properties: auto}: properties that start arriving while the job runs become
 * columns without a restart; old rows read them as null; what cannot be a column stays in {@code
 * properties}; every row is committed once.
 */
class AutoColumnsTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @AfterEach
  void noFaults() {
    SinkFaults.install(null);
  }

  /**
   * ... also through a failure right after the schema commit that added {@code battery}, before the
   * file that needs it exists: the replay fills the column, no row is lost or doubled.
   */
  @Test
  void propertiesArrivingMidStreamBecomeColumns(@TempDir Path dir) throws Exception {
    String topic = "auto";
    kafka.createTopic(topic, 2);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of("input.typed-properties", "auto", "sink.max-latency", "1s"));
    // before the job: vehicle and count only
    produce(topic, "a", 200, i -> "\"vehicle\":\"v" + (i % 5) + "\",\"count\":" + i);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(TestKit.fixedDelayRestarts(3));
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    JobClient job = env.executeAsync("auto");
    Table table = TestKit.table(config);
    awaitRows(table, 200);
    table.refresh();
    assertThat(table.schema().findField("battery")).isNull();
    // a concurrent writer adds two columns; the job must keep them and fill the one it is sent
    for (int attempt = 0; table.schema().findField("heading") == null; attempt++) {
      try {
        table
            .updateSchema()
            .addColumn("heading", Types.DoubleType.get())
            .addColumn("owner_note", Types.StringType.get())
            .commit();
      } catch (CommitFailedException raced) {
        assertThat(attempt).as("schema commit attempts").isLessThan(10);
      }
      table.refresh();
    }
    AtomicInteger failures = new AtomicInteger();
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_SCHEMA_CHANGE && failures.getAndIncrement() == 0) {
            throw new IllegalStateException("injected failure after the schema commit");
          }
        });

    // while it runs: a new double, a mixed-type count, a nested object, a base column name, a name
    // to clean up
    produce(
        topic,
        "b",
        200,
        i ->
            "\"vehicle\":\"v"
                + (i % 5)
                + "\",\"count\":"
                + (i % 2 == 0 ? Integer.toString(i) : i + ".5")
                + ",\"Battery\":"
                + (i + 0.25)
                + ",\"heading\":"
                + i
                + ",\"meta\":{\"x\":1},\"event_time\":\"oops\",\"Firmware Ver\":\"1."
                + i
                + "\"");
    List<Record> rows = awaitRows(table, 400);
    Thread.sleep(1_000); // a late duplicate would show up in the next commits
    rows = TestKit.rows(table);
    TestKit.cancelAndWait(job);
    assertThat(failures).as("the fault was reached").hasPositiveValue();

    table.refresh();
    assertThat(table.schema().findField("vehicle").type()).isEqualTo(Types.StringType.get());
    assertThat(table.schema().findField("count").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("battery").type()).isEqualTo(Types.DoubleType.get());
    assertThat(table.schema().findField("firmware_ver").type()).isEqualTo(Types.StringType.get());
    assertThat(table.schema().findField("meta")).isNull();
    assertThat(table.schema().findField("heading").type()).isEqualTo(Types.DoubleType.get());
    assertThat(table.schema().findField("owner_note").type()).isEqualTo(Types.StringType.get());
    Map<String, Record> byId = new HashMap<>();
    for (Record r : rows) {
      assertThat(byId.put((String) r.getField("id"), r)).as("a duplicate").isNull();
    }
    assertThat(byId).hasSize(400);
    for (int i = 0; i < 200; i++) {
      Record a = byId.get("a" + i);
      assertThat(a.getField("vehicle")).isEqualTo("v" + (i % 5));
      assertThat(a.getField("count")).isEqualTo((long) i);
      assertThat(a.getField("battery")).as("a new column is null on old rows").isNull();
      assertThat(a.getField("properties")).isEqualTo("{}");
      Record b = byId.get("b" + i);
      assertThat(b.getField("vehicle")).isEqualTo("v" + (i % 5));
      assertThat(b.getField("battery")).isEqualTo(i + 0.25);
      assertThat(b.getField("firmware_ver")).isEqualTo("1." + i);
      assertThat(b.getField("heading")).as("an integer fits a double column").isEqualTo((double) i);
      assertThat(b.getField("owner_note")).isNull();
      String props = (String) b.getField("properties");
      assertThat(props).contains("\"meta\":{\"x\":1}", "\"event_time\":\"oops\"");
      if (i % 2 == 0) {
        assertThat(b.getField("count")).isEqualTo((long) i);
        assertThat(props).doesNotContain("count");
      } else {
        assertThat(b.getField("count")).as("a fraction does not fit the long column").isNull();
        assertThat(props).contains("\"count\":" + i + ".5");
      }
    }
  }

  private static void produce(
      String topic, String prefix, int count, java.util.function.IntFunction<String> props)
      throws Exception {
    List<byte[]> values = new ArrayList<>();
    long t0 = System.currentTimeMillis() - 60_000;
    for (int i = 0; i < count; i++) {
      String json =
          String.format(
              Locale.ROOT,
              "{\"id\":\"%s%d\",\"event_time\":\"%s\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.4f,%.4f]},"
                  + "\"properties\":{%s}}",
              prefix,
              i,
              Instant.ofEpochMilli(t0 + i),
              10 + i * 0.001,
              50 + i * 0.001,
              props.apply(i));
      values.add(json.getBytes(StandardCharsets.UTF_8));
    }
    TestKit.produceValues(kafka.bootstrapServers(), topic, values);
  }

  private static List<Record> awaitRows(Table table, int rows) throws Exception {
    List<Record> out = List.of();
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline && out.size() < rows) {
      Thread.sleep(300);
      out = TestKit.rows(table);
    }
    return out;
  }
}
