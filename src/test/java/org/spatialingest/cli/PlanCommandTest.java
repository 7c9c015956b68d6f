package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.JobOptions;
import org.spatialingest.sizing.ClusterPlan;
import org.spatialingest.sizing.MeasuredCosts;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.sizing.Units;
import picocli.CommandLine;

class PlanCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void jsonHasTheDocumentedFields() throws Exception {
    // 100 rec/s, b = e = 500: latency binds at 100 * 120 = 12000 rows = 6 MB per file every 120 s
    CliRun r = CliRun.of("plan", "--bytes-per-record", "500", "--rate", "100", "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.fieldNames())
        .toIterable()
        .contains(
            "bytesPerRecord",
            "encodedBytesPerRecord",
            "rowsByMemory",
            "rowsByFile",
            "rowsByTime",
            "rowsPerBatch",
            "commitIntervalSeconds",
            "expectedFileMb",
            "bindingConstraint",
            "filesPerDay",
            "advice",
            "config");
    assertThat(j.get("bytesPerRecord").asDouble()).isEqualTo(500.0);
    assertThat(j.get("encodedBytesPerRecord").asDouble()).isEqualTo(500.0);
    assertThat(j.get("encodedBytesSource").asText()).isEqualTo("assumed-equal-to-buffered");
    assertThat(j.get("rowsByMemory").asLong()).isEqualTo(256_000); // 128e6 / 500
    assertThat(j.get("rowsByFile").asLong()).isEqualTo(256_000);
    assertThat(j.get("rowsByTime").asLong()).isEqualTo(12_000);
    assertThat(j.get("rowsPerBatch").asLong()).isEqualTo(12_000);
    assertThat(j.get("bindingConstraint").asText()).isEqualTo("latency");
    assertThat(j.get("commitIntervalSeconds").asDouble()).isEqualTo(120.0);
    assertThat(j.get("expectedFileMb").asDouble()).isCloseTo(6.0, within(1e-9));
    assertThat(j.get("filesPerDay").asLong()).isEqualTo(720);
    assertThat(j.get("advice").asText()).contains("Latency binds");
    JsonNode job = j.get("config").get("job");
    assertThat(job.get("sink.memory-budget").asText()).isEqualTo("128MB");
    assertThat(job.get("sink.target-file-size").asText()).isEqualTo("128MB");
    assertThat(job.get("sink.max-latency").asText()).isEqualTo("120s");
    assertThat(job.get("checkpoint.interval").asText()).isEqualTo("10s");
    assertThat(j.get("config").get("flinkConf").get("execution.checkpointing.interval").asText())
        .isEqualTo("10s");
  }

  @Test
  void theSinkBoundsDefaultToTheJobsDefaultsAndFlagsStayAsGiven() throws Exception {
    // without the bound flags plan sizes the job as it runs by default: JobOptions' defaults
    SizingBounds job = JobConfig.defaults().sizingBounds();
    CliRun r = CliRun.of("plan", "--bytes-per-record", "500", "--rate", "100", "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode config = JSON.readTree(r.out()).get("config").get("job");
    assertThat(config.get("sink.memory-budget").asText())
        .isEqualTo(Units.formatSize(job.memoryBytes()));
    assertThat(config.get("sink.target-file-size").asText())
        .isEqualTo(Units.formatSize(job.targetFileBytes()));
    assertThat(config.get("sink.max-latency").asText())
        .isEqualTo(Units.formatDuration(job.maxLatency()));
    assertThat(config.get("checkpoint.interval").asText())
        .isEqualTo(Units.formatDuration(job.checkpointInterval()));
    // and --help shows those defaults, in the flags' units
    CliRun help = CliRun.of("plan", "--help");
    String memoryMb =
        BigDecimal.valueOf(job.memoryBytes()).movePointLeft(6).stripTrailingZeros().toPlainString();
    assertThat(help.out().replaceAll("\\s+", " "))
        .contains("memory-budget), MB. Default: " + memoryMb + ".")
        .contains("(sink.max-latency). Default: " + JobOptions.SINK_MAX_LATENCY.defaultValue());

    // a rate that needs more writers than --writers sizes with those, and leaves the flag as given
    PlanCommand plan = new PlanCommand();
    CommandLine cli = new CommandLine(plan);
    cli.setOut(new PrintWriter(new StringWriter()));
    int code = cli.execute("--bytes-per-record", "180", "--rate", "1000000", "--json");
    assertThat(code).isZero();
    assertThat(plan.writers).isEqualTo(1);
  }

  @Test
  void the432000FilesPerDayExample() throws Exception {
    CliRun r =
        CliRun.of(
            "plan",
            "--bytes-per-record",
            "1000",
            "--rate",
            "5000",
            "--max-latency",
            "10s",
            "--checkpoint-interval",
            "10s",
            "--partitions-per-commit",
            "50",
            "--writers",
            "1",
            "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("commitIntervalSeconds").asDouble()).isEqualTo(10.0);
    assertThat(j.get("filesPerDay").asLong()).isEqualTo(432_000);
  }

  @Test
  void sampleFileAndEncodedFlag() throws Exception {
    Path sample = dir.resolve("sample.ndjson");
    String point =
        "{\"id\":\"p%d\",\"event_time\":\"2026-11-29T10:00:0%dZ\","
            + "\"geometry\":{\"type\":\"Point\",\"coordinates\":[13.4,52.5]}}";
    Files.writeString(
        sample,
        String.format(point, 1, 1) + "\n\n" + String.format(point, 2, 2) + "\n",
        StandardCharsets.UTF_8);
    CliRun enc =
        CliRun.of(
            "plan",
            "--sample",
            sample.toString(),
            "--encoded-bytes-per-record",
            "50",
            "--rate",
            "1000",
            "--memory-mb",
            "64",
            "--json");
    assertThat(enc.exitCode()).as(enc.err()).isZero();
    JsonNode e = JSON.readTree(enc.out());
    assertThat(e.get("sampleSize").asLong()).isEqualTo(2);
    assertThat(e.get("encodedBytesPerRecord").asDouble()).isEqualTo(50.0);
    assertThat(e.get("encodedBytesSource").asText()).isEqualTo("flag");
    assertThat(e.get("rowsByFile").asLong()).isEqualTo(2_560_000); // 128e6 / 50
    assertThat(e.has("encodedFiles")).as("no Parquet written when the flag gives e").isFalse();
    double b = e.get("bytesPerRecord").asDouble();
    assertThat(b)
        .as("serialized row + per-row overhead, not the JSON line")
        .isGreaterThan(100)
        .isLessThan(300);
    assertThat(e.get("rowsByMemory").asLong()).isEqualTo((long) Math.floor(64e6 / b));

    // lines that are not telemetry records: nothing to measure
    Path junk = dir.resolve("junk.ndjson");
    Files.writeString(
        junk, "a".repeat(100) + "\n" + "b".repeat(300) + "\n", StandardCharsets.UTF_8);
    CliRun r = CliRun.of("plan", "--sample", junk.toString(), "--rate", "1000", "--json");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err())
        .contains("--sample")
        .contains("none of the 2 records")
        .contains("malformed_json");
  }

  @Test
  void humanOutputAndDerivation() throws Exception {
    Path out = dir.resolve("derived");
    CliRun r =
        CliRun.of(
            "plan",
            "--bytes-per-record",
            "500",
            "--rate",
            "20000",
            "--memory-mb",
            "1000",
            "--write-derivation",
            out.toString());
    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.out())
        .contains("file_size binds")
        .contains("sink.memory-budget: 1000MB")
        .contains("execution.checkpointing.interval: 10s");

    JsonNode d = JSON.readTree(out.resolve("derivation.json").toFile());
    assertThat(d.get("date").asText()).isNotBlank();
    assertThat(d.get("source").asText()).isEqualTo("flag");
    assertThat(d.get("bytesPerRecord").asDouble()).isEqualTo(500.0);
    assertThat(d.get("inputs").get("rate").asDouble()).isEqualTo(20000.0);
    assertThat(d.get("outputs").get("bindingConstraint").asText()).isEqualTo("file_size");
    assertThat(d.get("outputs").get("commitIntervalSeconds").asDouble())
        .isEqualTo(20.0); // 12.8 s -> 20 s

    // the job snippet loads through the real config loader
    Map<String, String> yaml = ConfigLoader.readYaml(out.resolve("sizing.yaml"));
    assertThat(yaml)
        .containsEntry("sink.memory-budget", "1000MB")
        .containsEntry("sink.max-latency", "120s");
    assertThat(Files.readString(out.resolve("flink-conf-sizing.yaml")))
        .contains("execution.checkpointing.interval: 10s");
  }

  @Test
  void aTargetRateGetsTheClusterItNeedsFromTheMeasuredCosts() throws Exception {
    CliRun r =
        CliRun.of(
            "plan",
            "--bytes-per-record",
            "180",
            "--encoded-bytes-per-record",
            "40",
            "--rate",
            "1000000",
            "--workload",
            "points",
            "--kafka-partitions",
            "8",
            "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode c = JSON.readTree(r.out()).get("cluster");
    MeasuredCosts points = MeasuredCosts.POINTS;
    int source =
        (int) Math.ceil(points.transformMicrosPerRecord() / ClusterPlan.TARGET_UTILIZATION);
    int writers = (int) Math.ceil(points.sinkMicrosPerRecord() / ClusterPlan.TARGET_UTILIZATION);
    assertThat(c.get("sourceParallelism").asInt()).isEqualTo(source);
    assertThat(c.get("writerParallelism").asInt()).isEqualTo(writers);
    assertThat(c.get("slots").asInt()).isEqualTo(Math.max(source, writers));
    assertThat(c.get("taskManagers").asInt())
        .isEqualTo((Math.max(source, writers) + 3) / 4); // 4 slots each by default
    // 8 partitions cannot feed the source subtasks 1 M records/s of points need
    assertThat(c.get("limits").get(0).get("name").asText()).isEqualTo("kafka partitions");
    assertThat(c.get("limits").get(0).get("share").asDouble()).isGreaterThan(1.0);
    // the batch figures follow the writers the rate needs, not --writers' default of 1
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("filesPerDay").asDouble())
        .isCloseTo(24 * c.get("filesPerHour").asDouble(), within(1.0));
    assertThat(j.get("rowsByTime").asLong())
        .isEqualTo((long) Math.floor(1_000_000.0 / writers * 120));
    // the commit path: a commit's files (many here: 5,000 partitions per commit) at the p = 1
    // harness's measured CPU per file (the JSON keeps 3 decimals)
    JsonNode many =
        JSON.readTree(
                CliRun.of(
                        "plan",
                        "--bytes-per-record",
                        "180",
                        "--rate",
                        "1000000",
                        "--partitions-per-commit",
                        "5000",
                        "--json")
                    .out())
            .get("cluster");
    JsonNode commitPath = null;
    for (JsonNode limit : many.get("limits")) {
      if (limit.get("name").asText().equals("commit path (p = 1)")) {
        commitPath = limit;
      }
    }
    assertThat(commitPath).as("the commit path is among the limits").isNotNull();
    double filesPerCommit =
        many.get("filesPerHour").asDouble() / many.get("commitsPerHour").asDouble();
    assertThat(filesPerCommit).isGreaterThan(1_000);
    assertThat(commitPath.get("used").asDouble())
        .isCloseTo(filesPerCommit * MeasuredCosts.COMMIT_PATH_MICROS_PER_FILE / 1e6, within(5e-4));

    CliRun text = CliRun.of("plan", "--bytes-per-record", "180", "--rate", "100000");
    assertThat(text.out()).contains("cluster for 100,000 records/s").contains("limits first");

    CliRun workload =
        CliRun.of("plan", "--bytes-per-record", "180", "--rate", "1", "--workload", "lines");
    assertThat(workload.exitCode()).isEqualTo(2);
    assertThat(workload.err()).contains("--workload").contains("points, mix");
    CliRun slots =
        CliRun.of(
            "plan", "--bytes-per-record", "180", "--rate", "1", "--slots-per-taskmanager", "0");
    assertThat(slots.exitCode()).isEqualTo(2);
    assertThat(slots.err()).contains("--slots-per-taskmanager");
  }

  @Test
  void badInputExitsTwoNamingTheFlag() {
    CliRun notNumber = CliRun.of("plan", "--bytes-per-record", "500", "--rate", "fast");
    assertThat(notNumber.exitCode()).isEqualTo(2);
    assertThat(notNumber.err()).contains("--rate");

    CliRun negative = CliRun.of("plan", "--bytes-per-record", "500", "--rate", "-1");
    assertThat(negative.exitCode()).isEqualTo(2);
    assertThat(negative.err()).contains("--rate");

    CliRun both = CliRun.of("plan", "--bytes-per-record", "500", "--sample", "x", "--rate", "1");
    assertThat(both.exitCode()).isEqualTo(2);
    assertThat(both.err()).contains("--sample").contains("--bytes-per-record");

    CliRun latency =
        CliRun.of("plan", "--bytes-per-record", "500", "--rate", "1", "--max-latency", "2 weeks");
    assertThat(latency.exitCode()).isEqualTo(2);
    assertThat(latency.err()).contains("--max-latency");

    CliRun writers =
        CliRun.of("plan", "--bytes-per-record", "500", "--rate", "1", "--writers", "0");
    assertThat(writers.exitCode()).isEqualTo(2);
    assertThat(writers.err()).contains("--writers");

    CliRun missing = CliRun.of("plan", "--sample", dir.resolve("nope").toString(), "--rate", "1");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--sample");
  }

  @Test
  void aSampleIsParsedAndSizedWithTheJobsConfig() throws Exception {
    // a WKB hex point with a typed property: the default config (GeoJSON) rejects every record
    Path sample = dir.resolve("wkb.ndjson");
    String record =
        "{\"id\":\"w%d\",\"event_time\":\"2026-11-29T10:00:0%dZ\",\"geometry\":"
            + "\"0101000000CDCCCCCCCCCC2A400000000000404A40\",\"properties\":{\"speed\":%d.5}}";
    Files.writeString(
        sample,
        String.format(record, 1, 1, 10) + "\n" + String.format(record, 2, 2, 20) + "\n",
        StandardCharsets.UTF_8);
    CliRun defaults =
        CliRun.of(
            "plan",
            "--sample",
            sample.toString(),
            "--rate",
            "100",
            "--json",
            "--encoded-bytes-per-record",
            "50");
    assertThat(defaults.exitCode()).isEqualTo(2);
    assertThat(defaults.err()).contains("none of the 2 records").contains("input.format: wkb-hex");

    Path config = dir.resolve("job.yaml");
    Files.writeString(config, "input:\n  format: wkb-hex\n", StandardCharsets.UTF_8);
    CliRun wkb =
        CliRun.of(
            "plan",
            "--sample",
            sample.toString(),
            "--rate",
            "100",
            "--json",
            "--config",
            config.toString());
    assertThat(wkb.exitCode()).as(wkb.err()).isZero();
    JsonNode w = JSON.readTree(wkb.out());
    assertThat(w.get("sampleSize").asLong()).isEqualTo(2);
    assertThat(w.get("encodedFiles").asInt()).isEqualTo(1);

    // a typed column: the row (and so the buffered bytes) is the typed table's
    CliRun typed =
        CliRun.of(
            "plan",
            "--sample",
            sample.toString(),
            "--rate",
            "100",
            "--json",
            "--config",
            config.toString(),
            "--set",
            "input.typed-properties=speed:double");
    assertThat(typed.exitCode()).as(typed.err()).isZero();
    JsonNode t = JSON.readTree(typed.out());
    assertThat(t.get("sampleSize").asLong()).isEqualTo(2);
    assertThat(t.get("bytesPerRecord").asDouble()).isNotEqualTo(w.get("bytesPerRecord").asDouble());

    CliRun noSample =
        CliRun.of(
            "plan", "--bytes-per-record", "500", "--rate", "1", "--config", config.toString());
    assertThat(noSample.exitCode()).isEqualTo(2);
    assertThat(noSample.err()).contains("--config and --set apply only with --sample or --topic");
  }
}
