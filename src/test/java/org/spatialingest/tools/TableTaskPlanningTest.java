package org.spatialingest.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Random;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.cli.CliTestAccess;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sizing.IcebergSplitPlanning;
import org.spatialingest.sizing.ScanInput;
import org.spatialingest.sizing.TaskEstimate;

/**
 * estimate-tasks --table against Iceberg's own planner, on tables written by the sink's file
 * writer.
 */
class TableTaskPlanningTest {
  private static final long DAY = 86_400_000L;
  private static final long START = 1_795_000_000_000L - 1_795_000_000_000L % DAY; // a UTC midnight

  @TempDir Path warehouse;

  /**
   * A table with {@code commits} sink commits of random sizes; small row groups so files carry
   * several offsets.
   */
  private Table table(String name, long seed, int commits, int maxRows, int days) throws Exception {
    JobConfig config = SinkWrittenTables.config(warehouse, "ns", name, "day");
    Table table =
        SinkWrittenTables.create(
            config, Map.of(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "16384"));
    Random random = new Random(seed);
    TelemetryGenerator generator = new TelemetryGenerator(seed, 8, 12, 100);
    for (int c = 0; c < commits; c++) {
      int n = 20 + random.nextInt(maxRows);
      long day = START + (c % days) * DAY;
      SinkWrittenTables.commit(
          table,
          SinkWrittenTables.rows(generator, n, day + c * 1000L, 10),
          CloseReason.LATENCY,
          c + 1);
    }
    return table;
  }

  @Test
  void estimateEqualsIcebergPlannerOnGeneratedTables() throws Exception {
    List<Table> tables =
        List.of(
            table("mixed", 1, 10, 1200, 1),
            table("small", 2, 20, 150, 1),
            table("large", 3, 4, 3000, 1));
    long[] splitSizes = {24 << 10, 128 << 10, 512 << 10, 128L << 20};
    long[] openCosts = {0, 16 << 10, 200 << 10};
    int[] lookbacks = {1, 3, 10};
    int comparisons = 0;
    int multiTask = 0;
    int offsetsMatter = 0;
    int filesWithSeveralRowGroups = 0;
    for (Table table : tables) {
      ScanInput input = TableTaskPlanning.scanInput(table, null);
      assertThat(input.fileCount()).isGreaterThanOrEqualTo(4);
      for (int f = 0; f < input.fileCount(); f++) {
        if (input.splitOffsets(f) != null && input.splitOffsets(f).size() > 1) {
          filesWithSeveralRowGroups++;
        }
      }
      for (long split : splitSizes) {
        for (long open : openCosts) {
          for (int lookback : lookbacks) {
            TaskEstimate est =
                IcebergSplitPlanning.estimate(
                    input, split, open, lookback, OptionalInt.empty(), OptionalInt.empty());
            int iceberg = TableTaskPlanning.icebergPlannedTasks(table, null, split, lookback, open);
            assertThat(est.estimatedTasks())
                .as("%s split=%d open=%d lookback=%d", table.name(), split, open, lookback)
                .isEqualTo(iceberg);
            comparisons++;
            if (iceberg > 1) {
              multiTask++;
            }
            TaskEstimate sizesOnly =
                IcebergSplitPlanning.estimate(
                    ScanInput.ofSizes(input.sizes()),
                    split,
                    open,
                    lookback,
                    OptionalInt.empty(),
                    OptionalInt.empty());
            if (sizesOnly.estimatedTasks() != iceberg) {
              offsetsMatter++;
            }
          }
        }
      }
    }
    assertThat(comparisons).isEqualTo(3 * 4 * 3 * 3);
    assertThat(multiTask).as("most settings plan several tasks").isGreaterThan(comparisons / 2);
    assertThat(filesWithSeveralRowGroups).as("row-group offsets are recorded").isGreaterThan(3);
    assertThat(offsetsMatter)
        .as("without split offsets some estimates would be wrong")
        .isPositive();
  }

  @Test
  void cliTableEstimateMatchesIcebergForAPartition() throws Exception {
    Table table = table("twodays", 4, 12, 800, 2);
    JobConfig config = SinkWrittenTables.config(warehouse, "ns", "twodays", "day");
    String day = java.time.Instant.ofEpochMilli(START + DAY).toString().substring(0, 10);
    long filesOfDay = 0;
    for (var task : table.newScan().planFiles()) {
      if (PartitionFilter.label(table.spec(), task.file().partition()).endsWith(day)) {
        filesOfDay++;
      }
    }
    assertThat(filesOfDay).isEqualTo(6);
    List<String> args =
        new ArrayList<>(
            List.of(
                "estimate-tasks",
                "--engine",
                "iceberg",
                "--table",
                "ns.twodays",
                "--partition",
                "day=" + day,
                "--max-partition-bytes",
                "128KiB",
                "--open-cost",
                "16KiB",
                "--lookback",
                "3",
                "--json"));
    args.addAll(SinkWrittenTables.catalogArgs(config));
    CliTestAccess.Run r = CliTestAccess.run(args.toArray(String[]::new));
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = new ObjectMapper().readTree(r.out());
    assertThat(j.get("inputFiles").asLong()).isEqualTo(filesOfDay);
    assertThat(j.get("partition").asText()).isEqualTo("day=" + day);
    assertThat(j.get("filesWithSplitOffsets").asInt()).isEqualTo(6);
    assertThat(j.get("estimatedTasks").asInt())
        .isGreaterThan(1)
        .isEqualTo(j.get("icebergPlannedTasks").asInt());

    List<String> whole =
        new ArrayList<>(
            List.of(
                "estimate-tasks",
                "--engine",
                "iceberg",
                "--table",
                "ns.twodays",
                "--max-partition-bytes",
                "256KiB",
                "--open-cost",
                "16KiB",
                "--lookback",
                "3"));
    whole.addAll(SinkWrittenTables.catalogArgs(config));
    CliTestAccess.Run t = CliTestAccess.run(whole.toArray(String[]::new));
    assertThat(t.exitCode()).as(t.err()).isZero();
    assertThat(t.out()).contains("input files          12").contains("iceberg planTasks");

    CliTestAccess.Run missing =
        CliTestAccess.run(
            "estimate-tasks",
            "--engine",
            "spark",
            "--table",
            "ns.nope",
            "--set",
            "catalog.warehouse=" + warehouse);
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("ns.nope").contains("does not exist");

    CliTestAccess.Run both =
        CliTestAccess.run(
            "estimate-tasks", "--engine", "spark", "--sizes", "x", "--partition", "day=" + day);
    assertThat(both.exitCode()).isEqualTo(2);
  }
}
