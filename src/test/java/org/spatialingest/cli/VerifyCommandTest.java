package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.write.SinkFiles;
import org.spatialingest.tools.SinkWrittenTables;

/**
 * verify on a table written by the sink's file writer and committed with the sink's summary keys.
 */
class VerifyCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long DAY = 86_400_000L;
  private static final long OLD_DAY = 1_795_000_000_000L - 1_795_000_000_000L % DAY;
  private static final long NEW_DAY = OLD_DAY + DAY;

  @TempDir Path warehouse;
  JobConfig config;
  Table table;
  List<DataFile> newestFiles = new ArrayList<>();
  long newestMedian;

  @BeforeEach
  void table() throws Exception {
    config = SinkWrittenTables.config(warehouse, "ns", "t", "day");
    table = SinkWrittenTables.create(config, Map.of());
    TelemetryGenerator gen = new TelemetryGenerator(11, 6, 9, 200);
    // older day: tiny files closed by latency
    for (int i = 0; i < 3; i++) {
      SinkWrittenTables.commit(
          table,
          SinkWrittenTables.rows(gen, 15, OLD_DAY + i * 60_000L, 100),
          CloseReason.LATENCY,
          i + 1);
    }
    // newest day: five files of 400..480 rows, closed by bytes except one by latency
    for (int i = 0; i < 5; i++) {
      Snapshot s =
          SinkWrittenTables.commit(
              table,
              SinkWrittenTables.rows(gen, 400 + 20 * i, NEW_DAY + i * 60_000L, 10),
              i == 4 ? CloseReason.LATENCY : CloseReason.BYTES,
              10 + i);
      SnapshotChanges.builderFor(table)
          .snapshot(s)
          .build()
          .addedDataFiles()
          .forEach(newestFiles::add);
    }
    long[] sizes = newestFiles.stream().mapToLong(DataFile::fileSizeInBytes).sorted().toArray();
    assertThat(sizes).hasSize(5);
    newestMedian = sizes[2];
  }

  private CliRun verify(String... extra) {
    List<String> args = new ArrayList<>(List.of("verify"));
    args.addAll(SinkWrittenTables.catalogArgs(config));
    args.addAll(Arrays.asList(extra));
    return CliRun.of(args.toArray(String[]::new));
  }

  private static String mb(double bytes) {
    return String.format(Locale.ROOT, "%.6f", bytes / 1e6);
  }

  @Test
  void withinToleranceOnTheNewestPartition() throws Exception {
    CliRun r = verify("--expected-mb", mb(newestMedian * 1.5), "--json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    String newDay = java.time.Instant.ofEpochMilli(NEW_DAY).toString().substring(0, 10);
    assertThat(j.get("partition").asText()).isEqualTo("event_time_day=" + newDay);
    assertThat(j.get("partitionSelection").asText()).isEqualTo("newest");
    assertThat(j.get("files").asInt()).isEqualTo(5);
    assertThat(j.get("medianFileBytes").asLong()).isEqualTo(newestMedian);
    assertThat(j.get("withinTolerance").asBoolean()).isTrue();
    assertThat(j.get("verdict").asText()).isEqualTo("ok");
    assertThat(j.get("sinkCommits").asInt()).isEqualTo(5);
    assertThat(j.get("closedByReason").get("bytes").asLong()).isEqualTo(4);
    assertThat(j.get("closedByReason").get("latency").asLong()).isEqualTo(1);
    long histogramFiles = 0;
    for (JsonNode b : j.get("histogram")) {
      histogramFiles += b.get("files").asLong();
    }
    assertThat(histogramFiles).isEqualTo(5);
    assertThat(j.get("snapshotsPerHour").asDouble()).isPositive();

    CliRun text = verify("--expected-mb", mb(newestMedian));
    assertThat(text.exitCode()).isZero();
    assertThat(text.out())
        .contains("files                5")
        .contains("OK")
        .contains("size histogram");
  }

  @Test
  void outsideToleranceExitsOneAndExplains() throws Exception {
    CliRun small = verify("--expected-mb", mb(newestMedian * 3), "--json");
    assertThat(small.exitCode()).isEqualTo(1);
    JsonNode s = JSON.readTree(small.out());
    assertThat(s.get("verdict").asText()).isEqualTo("too_small");
    assertThat(s.get("explanation").asText()).contains("latency bound binds earlier than planned");

    CliRun large = verify("--expected-mb", mb(newestMedian / 3.0), "--json");
    assertThat(large.exitCode()).isEqualTo(1);
    JsonNode l = JSON.readTree(large.out());
    assertThat(l.get("verdict").asText()).isEqualTo("too_large");
    assertThat(l.get("explanation").asText()).contains("fan-out");

    assertThat(verify("--expected-mb", mb(newestMedian * 3), "--tolerance", "4").exitCode())
        .isZero();

    // the older day holds the tiny files
    String oldDay = java.time.Instant.ofEpochMilli(OLD_DAY).toString().substring(0, 10);
    CliRun old =
        verify("--expected-mb", mb(newestMedian), "--partition", "day=" + oldDay, "--json");
    assertThat(old.exitCode()).isEqualTo(1);
    assertThat(JSON.readTree(old.out()).get("files").asInt()).isEqualTo(3);
    assertThat(JSON.readTree(old.out()).get("closedByReason").get("latency").asLong()).isEqualTo(3);
  }

  @Test
  void expectedSizeFromAPlanDerivation(@TempDir Path planDir) throws Exception {
    // latency binds: rows = 10 rec/s * 120 s = 1200 per batch; expectedFileMb = 1200 * e / 1e6 =
    // median
    double e = newestMedian / 1200.0;
    CliRun plan =
        CliRun.of(
            "plan",
            "--bytes-per-record",
            "100",
            "--encoded-bytes-per-record",
            String.format(Locale.ROOT, "%.6f", e),
            "--rate",
            "10",
            "--write-derivation",
            planDir.toString());
    assertThat(plan.exitCode()).as(plan.err()).isZero();
    CliRun r = verify("--plan", planDir.toString(), "--json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("expectedSource").asText()).startsWith("plan:");
    assertThat(j.get("ratio").asDouble()).isBetween(0.99, 1.01);

    assertThat(verify("--plan", planDir.resolve("missing").toString()).exitCode()).isEqualTo(2);
    assertThat(verify("--expected-mb", "1", "--partition", "day=2000-01-01").exitCode())
        .isEqualTo(2);
    assertThat(verify("--expected-mb", "1", "--tolerance", "0.5").exitCode()).isEqualTo(2);
  }

  @Test
  void measuresTheSinkFilesNotTheCompactedOnes() throws Exception {
    // compaction: the five newest files rewritten into one (a non-sink snapshot)
    SinkFiles.Written compacted =
        SinkFiles.write(
            table,
            SinkWrittenTables.rows(new TelemetryGenerator(12, 6, 9, 200), 2200, NEW_DAY, 10));
    RewriteFiles rewrite = table.newRewrite();
    newestFiles.forEach(rewrite::deleteFile);
    compacted.files().forEach(rewrite::addFile);
    rewrite.commit();
    CliRun r = verify("--expected-mb", mb(newestMedian), "--json");
    assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("files").asInt()).isEqualTo(5);
    assertThat(j.get("medianFileBytes").asLong()).isEqualTo(newestMedian);
  }
}
