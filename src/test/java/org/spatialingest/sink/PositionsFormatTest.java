package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TablePositions;
import org.spatialingest.table.TelemetryTable;

/**
 * The positions format ({@link TablePositions}) at scale and across releases: a snapshot of a
 * backfill of 10,000 files and a topic of 1,000 partitions stays small, and tables whose positions
 * an older release wrote (format 1) are resumed exactly. Real broker, MiniCluster and catalog.
 */
class PositionsFormatTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final int SUMMARY_LIMIT = 64 * 1024;

  /** The committer's summary entries for 10,000 file sources and 1,000 partitions, committed. */
  @Test
  void tenThousandFilesAndAThousandPartitionsKeepTheSummaryUnder64KB(@TempDir Path dir)
      throws Exception {
    Map<String, Long> positions = new HashMap<>();
    for (int i = 0; i < 10_000; i++) {
      positions.put(
          SourceKeys.file("/data/backfill/2026/12/01/part-" + i + "-" + UUID.randomUUID() + ".nd"),
          21L);
    }
    Map<String, Long> kafkaPositions = new HashMap<>();
    for (int p = 0; p < 1_000; p++) {
      kafkaPositions.put(SourceKeys.kafka("vehicle-telemetry", p), 9_000_000_000L + 7_919L * p);
    }
    positions.putAll(kafkaPositions);
    JobConfig config = TestKit.config("localhost:1", "unused", dir, Map.of());
    Table table =
        TableBootstrap.ensureTable(
            Catalogs.catalogLoader(config).loadCatalog(),
            Catalogs.tableIdentifier(config),
            TelemetryTable.LAYOUT,
            config.partitioning());
    var append = table.newFastAppend();
    TablePositions.summary(positions).forEach(append::set);
    append.commit();
    table.refresh();

    Map<String, String> summary = table.currentSnapshot().summary();
    long summaryBytes =
        summary.entrySet().stream()
            .mapToLong(e -> e.getKey().length() + e.getValue().length())
            .sum();
    long metadataBytes =
        table
            .io()
            .newInputFile(
                ((HasTableOperations) table).operations().current().metadataFileLocation())
            .getLength();
    long formatOneBytes = new ObjectMapper().writeValueAsString(new TreeMap<>(positions)).length();
    System.out.printf(
        "positions of 10,000 files + 1,000 partitions: format 1 %,d bytes, format 2 %,d bytes;"
            + " whole summary %,d bytes, metadata.json %,d bytes%n",
        formatOneBytes,
        summary.get(SnapshotSummaryKeys.POSITIONS).length(),
        summaryBytes,
        metadataBytes);
    assertThat(summaryBytes).isLessThanOrEqualTo(SUMMARY_LIMIT);
    assertThat(summary)
        .containsEntry(
            SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(TablePositions.FORMAT));
    assertThat(TablePositions.read(table)).isEqualTo(kafkaPositions);
  }

  /**
   * A Kafka table whose newest positions an older release wrote (format 1, with file keys too): the
   * next start without state resumes from them, every record once.
   */
  @Test
  void kafkaPositionsOfFormatOneAreResumedExactly(@TempDir Path dir) throws Exception {
    String topic = "format-one";
    kafka.createTopic(topic, 3);
    MixedInput first = MixedInput.of("a", 1_500, 40, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, first.values());
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir.resolve("warehouse"),
            Map.of("kafka.starting-offsets", "table", "sink.max-latency", "1s"));
    run(config, 2);
    Table table = TestKit.table(config);
    Map<String, Long> written = TablePositions.read(table);
    assertThat(written).hasSize(3);
    rewriteAsFormatOne(table, written);

    MixedInput second = MixedInput.of("b", 1_500, 40, 30);
    TestKit.produceValues(kafka.bootstrapServers(), topic, second.values());
    run(config, 2);
    first.plus(second).assertExactlyOnceIn(config);
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .containsEntry(
            SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(TablePositions.FORMAT));
  }

  /**
   * A file backfill whose table has format-1 positions (one entry per file), run again with one
   * more file: the files already read are skipped line by line, the new one is read, nothing twice.
   */
  @Test
  void fileBackfillOfFormatOneIsRerunExactly(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    MixedInput a = MixedInput.of("a", 800, 40, 30);
    MixedInput b = MixedInput.of("b", 800, 40, 30);
    MixedInput c = MixedInput.of("c", 800, 40, 30);
    write(in.resolve("part-a.ndjson"), a);
    write(in.resolve("part-b.ndjson"), b);
    JobConfig config =
        TestKit.config(
            "localhost:1",
            "unused",
            dir.resolve("warehouse"),
            Map.of("source", "file:" + in, "sink.max-latency", "1s"));
    run(config, 2);
    Table table = TestKit.table(config);
    // what an older release recorded: one entry per file, the line after its last record
    Map<String, Long> formatOne = new TreeMap<>();
    formatOne.put(SourceKeys.file(in.resolve("part-a.ndjson").toUri().toString()), 801L);
    formatOne.put(SourceKeys.file(in.resolve("part-b.ndjson").toUri().toString()), 801L);
    rewriteAsFormatOne(table, formatOne);
    long snapshots = table.currentSnapshot().sequenceNumber();

    run(config, 2);
    a.plus(b).assertExactlyOnceIn(config);
    table.refresh();
    assertThat(table.currentSnapshot().sequenceNumber())
        .as("a re-run of the same files commits nothing")
        .isEqualTo(snapshots);

    write(in.resolve("part-c.ndjson"), c);
    run(config, 1);
    a.plus(b).plus(c).assertExactlyOnceIn(config);
  }

  /** Commits an empty snapshot whose positions are in format 1, as releases before format 2. */
  private static void rewriteAsFormatOne(Table table, Map<String, Long> positions)
      throws Exception {
    table.refresh();
    table
        .newFastAppend()
        .set(
            SnapshotSummaryKeys.POSITIONS,
            new ObjectMapper().writeValueAsString(new TreeMap<>(positions)))
        .commit();
    table.refresh();
    assertThat(table.currentSnapshot().summary())
        .doesNotContainKey(SnapshotSummaryKeys.POSITIONS_FORMAT);
  }

  private static void write(Path file, MixedInput input) throws Exception {
    List<String> lines =
        input.values().stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList();
    Files.write(file, String.join("\n", lines).getBytes(StandardCharsets.UTF_8));
  }

  private static void run(JobConfig config, int parallelism) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    SpatialIngestJob.build(env, config, true);
    env.execute("positions-format");
  }
}
