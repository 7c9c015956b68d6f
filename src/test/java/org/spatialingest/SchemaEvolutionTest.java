package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TelemetryTable;
import org.spatialingest.tools.TableInspection;

/**
 * Declared schema evolution across restarts: {@code int -> long} and {@code float -> double} widen
 * the columns in place and a new name becomes an optional column, restarting from a savepoint whose
 * staging runs hold the narrow types and restarting without state; old rows keep their values (the
 * new column reads null), nothing is lost or doubled. A narrowing or incompatible change is refused
 * at start.
 */
class SchemaEvolutionTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final String NARROW = "count:int,level:float";
  private static final String WIDE = "count:long,level:double,note:string";

  /** Beyond int: only a widened column can hold the second run's counts. */
  private static final long BIG = 3_000_000_000L;

  @Test
  void aRestartFromASavepointWidensTheDeclaredColumnsInPlace(@TempDir Path dir) throws Exception {
    String topic = "evolve-state";
    kafka.createTopic(topic, 2);
    produce(topic, 0, 300, false);
    // bounds that never bind: run 1's rows live only in staging runs written with int and float
    JobConfig narrow =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of(
                "input.typed-properties",
                NARROW,
                "sink.max-latency",
                "1h",
                "sink.target-file-size",
                "1GB"));
    StreamExecutionEnvironment env1 = StreamExecutionEnvironment.getExecutionEnvironment();
    env1.setParallelism(2);
    SpatialIngestJob.build(env1, narrow, false);
    JobClient run1 = env1.executeAsync("evolve-1");
    Table table = TestKit.table(narrow);
    TestKit.awaitStagedRows(table, 300);
    String savepoint =
        run1.stopWithSavepoint(
                false, dir.resolve("savepoints").toUri().toString(), SavepointFormatType.CANONICAL)
            .get(60, TimeUnit.SECONDS);
    table.refresh();
    assertThat(table.currentSnapshot()).as("run 1 committed nothing").isNull();

    produce(topic, 300, 200, true);
    JobConfig wide = narrow.with(Map.of("input.typed-properties", WIDE, "sink.max-latency", "1s"));
    Configuration conf = new Configuration();
    conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    StreamExecutionEnvironment env2 = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env2.setParallelism(3); // a rescale too: the staging runs of 2 writers go to 3
    SpatialIngestJob.build(env2, wide, false);
    JobClient run2 = env2.executeAsync("evolve-2");
    List<Record> rows = awaitRows(table, 500);
    Thread.sleep(1_000); // a late duplicate would show up in the next commits
    rows = TestKit.rows(table);
    TestKit.cancelAndWait(run2);

    assertWidened(table, rows, 500);
  }

  @Test
  void aRestartWithoutStateWidensTheDeclaredColumnsInPlace(@TempDir Path dir) throws Exception {
    String topic = "evolve-stateless";
    kafka.createTopic(topic, 2);
    produce(topic, 0, 300, false);
    JobConfig narrow =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of("input.typed-properties", NARROW));
    runBounded(narrow);
    Table table = TestKit.table(narrow);
    assertThat(TestKit.rows(table)).hasSize(300);
    assertThat(table.schema().findField("count").type()).isEqualTo(Types.IntegerType.get());

    produce(topic, 300, 200, true);
    runBounded(narrow.with(Map.of("input.typed-properties", WIDE)));

    assertWidened(table, TestKit.rows(table), 500);
    List<TableInspection.SchemaRow> history = TableInspection.schemaHistory(table);
    assertThat(history.get(0).changes()).containsExactly("created with 13 columns");
    assertThat(history.stream().flatMap(h -> h.changes().stream()).toList())
        .as("inspect's schema history")
        .contains(
            "changed count: int -> long", "changed level: float -> double", "added note: string");
    assertThat(history.get(history.size() - 1).firstCommit()).isNotNull();
  }

  @Test
  void aNarrowingOrIncompatibleChangeIsRefusedAtStartNamingTheWayOut(@TempDir Path dir) {
    JobConfig wide =
        TestKit.config(
            "localhost:1",
            "t",
            dir.resolve("warehouse"),
            Map.of("input.typed-properties", "speed:double,vehicle:string"));
    Catalog catalog = Catalogs.catalogLoader(wide).loadCatalog();
    TableBootstrap.ensureTable(
        catalog, Catalogs.tableIdentifier(wide), TelemetryTable.layout(wide), wide.partitioning());

    for (String changed : List.of("speed:long,vehicle:string", "speed:double,vehicle:long")) {
      JobConfig config = wide.with(Map.of("input.typed-properties", changed));
      assertThatThrownBy(
              () ->
                  TableBootstrap.ensureTable(
                      catalog,
                      Catalogs.tableIdentifier(config),
                      TelemetryTable.layout(config),
                      config.partitioning()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(
              changed.startsWith("speed:long") ? "column speed" : "column vehicle")
          .hasMessageContaining(
              changed.startsWith("speed:long") ? "is double but the job writes it as long" : "")
          .hasMessageContaining(
              changed.startsWith("speed:long") ? "" : "is string but the job writes it as long")
          .hasMessageContaining("declare the new values under a new name")
          .hasMessageContaining("new table.name");
    }
    Table table = catalog.loadTable(Catalogs.tableIdentifier(wide));
    assertThat(table.schema().findField("speed").type()).isEqualTo(Types.DoubleType.get());
    assertThat(table.schema().findField("vehicle").type()).isEqualTo(Types.StringType.get());
  }

  /**
   * Rows {@code first..first+count-1} on 2 partitions; {@code count} the row number (plus {@link
   * #BIG} when {@code wide}), {@code level} the row number + 0.5 and, when wide, a {@code note}.
   */
  private static void produce(String topic, int first, int count, boolean wide) throws Exception {
    List<byte[]> values = new ArrayList<>();
    long t0 = System.currentTimeMillis() - 60_000;
    for (int i = first; i < first + count; i++) {
      String json =
          String.format(
              Locale.ROOT,
              "{\"id\":\"r%d\",\"event_time\":\"%s\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.4f,%.4f]},"
                  + "\"properties\":{\"count\":%d,\"level\":%.1f%s}}",
              i,
              Instant.ofEpochMilli(t0 + i),
              10 + i * 0.001,
              50 + i * 0.001,
              wide ? BIG + i : i,
              i + 0.5,
              wide ? ",\"note\":\"n" + i + "\"" : "");
      values.add(json.getBytes(StandardCharsets.UTF_8));
    }
    TestKit.produceValues(kafka.bootstrapServers(), topic, values);
  }

  private static void runBounded(JobConfig config) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("evolve");
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

  /** Rows r0..r299 with their narrow values read widened and no note; the rest with all three. */
  private static void assertWidened(Table table, List<Record> rows, int total) {
    table.refresh();
    assertThat(table.schema().findField("count").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("level").type()).isEqualTo(Types.DoubleType.get());
    assertThat(table.schema().findField("note").type()).isEqualTo(Types.StringType.get());
    Map<String, Record> byId = new HashMap<>();
    for (Record r : rows) {
      assertThat(byId.put((String) r.getField("id"), r)).as("a duplicate").isNull();
    }
    assertThat(byId).hasSize(total);
    for (int i = 0; i < total; i++) {
      Record r = byId.get("r" + i);
      assertThat(r).as("row r%d", i).isNotNull();
      boolean old = i < 300;
      assertThat(r.getField("count")).as("count of r%d", i).isEqualTo(old ? (long) i : BIG + i);
      assertThat(r.getField("level")).as("level of r%d", i).isEqualTo(i + 0.5);
      assertThat(r.getField("note")).as("note of r%d", i).isEqualTo(old ? null : "n" + i);
      assertThat((String) r.getField("properties")).doesNotContain("count", "level", "note");
    }
  }
}
