package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * plan --sample measures what the sink buffers and writes: the same records run through the real
 * job (Flink MiniCluster, BoundedIcebergSink) give the same buffered bytes (the sink's snapshot
 * summaries) and, within 1%, the same Parquet bytes per row. inspect then reads that job's snapshot
 * summaries.
 */
class PlanSampleAndInspectTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void sampleMatchesTheSinkAndInspectReadsItsSummaries(@TempDir Path dir) throws Exception {
    int n = 600;
    TelemetryGenerator generator = new TelemetryGenerator(21, 10, 40, 3000);
    long t0 = System.currentTimeMillis() - 30_000;
    StringBuilder ndjson = new StringBuilder();
    List<SourceRecord> records = new ArrayList<>();
    int polygons = 0;
    for (int i = 0; i < n; i++) {
      TelemetryGenerator.Record r = generator.next(t0 + i * 10L);
      polygons += r.polygon() ? 1 : 0;
      ndjson.append(new String(r.json(), StandardCharsets.UTF_8)).append('\n');
      // ingest time = event time, as plan assumes for file samples
      records.add(new SourceRecord(r.json(), "sample", 0, i, t0 + i * 10L));
    }
    assertThat(polygons).isEqualTo(15);
    String[] bad = {
      "not json at all",
      "{\"id\":\"x1\",\"event_time\":\"2026-11-29T10:00:00Z\"}",
      "{\"id\":\"x2\",\"event_time\":\"yesterday\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}}"
    };
    for (String b : bad) {
      ndjson.append(b).append("\n\n");
      records.add(
          new SourceRecord(b.getBytes(StandardCharsets.UTF_8), "sample", 0, records.size(), t0));
    }
    Path sample = dir.resolve("sample.ndjson");
    Files.writeString(sample, ndjson);

    CliRun plan = CliRun.of("plan", "--sample", sample.toString(), "--rate", "100", "--json");
    assertThat(plan.exitCode()).as(plan.err()).isZero();
    JsonNode p = JSON.readTree(plan.out());
    assertThat(p.get("encodedBytesSource").asText()).isEqualTo("measured-parquet");
    assertThat(p.get("source").asText()).isEqualTo("file:" + sample);
    assertThat(p.get("sampleSize").asLong()).isEqualTo(n);
    assertThat(p.get("recordsRead").asLong()).isEqualTo(n + 3);
    assertThat(p.get("parseFailures").asLong()).isEqualTo(3);
    assertThat(p.get("parseFailuresByReason").get("malformed_json").asLong()).isEqualTo(1);
    assertThat(p.get("parseFailuresByReason").get("missing_geometry").asLong()).isEqualTo(1);
    assertThat(p.get("parseFailuresByReason").get("invalid_time").asLong()).isEqualTo(1);
    assertThat(p.get("encodedFiles").asInt()).isEqualTo(1);
    assertThat(p.get("recordsPerSecond").asDouble()).isEqualTo(100.0);
    assertThat(p.get("rateSource").asText()).isEqualTo("flag");
    double buffered = p.get("bytesPerRecord").asDouble();
    double encoded = p.get("encodedBytesPerRecord").asDouble();
    assertThat(encoded)
        .as("Parquet (zstd) is much smaller than the buffered rows")
        .isLessThan(buffered * 0.8);
    assertThat(p.get("rowsByFile").asLong()).isEqualTo((long) Math.floor(128e6 / encoded));
    assertThat(p.get("rowsByMemory").asLong()).isEqualTo((long) Math.floor(128e6 / buffered));
    // a line-length stand-in would be far off for WKB polygons: the JSON text is not what the sink
    // buffers
    double meanLine =
        (ndjson
                .toString()
                .lines()
                .filter(l -> !l.isBlank())
                .mapToLong(l -> l.getBytes(StandardCharsets.UTF_8).length)
                .sum())
            / (double) (n + 3);
    assertThat(Math.abs(meanLine - buffered) / buffered).isGreaterThan(0.1);

    // the same records through the real job
    Path warehouse = dir.resolve("warehouse");
    JobConfig config =
        TestKit.config(
            "unused:9092",
            "sample",
            warehouse,
            Map.of(
                "sink.max-latency", "1h",
                "sink.target-file-size", "1GB",
                "sink.memory-budget", "512MB",
                "checkpoint.interval", "500ms"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    SpatialIngestJob.configureCheckpointing(env, config);
    DataStream<SourceRecord> source = env.fromData(records);
    SpatialIngestJob.sink(SpatialIngestJob.transform(source, config), config);
    env.execute("plan-sample-vs-sink");

    Table table = TestKit.table(config);
    long fileBytes = 0;
    long rows = 0;
    int files = 0;
    for (FileScanTask task : table.newScan().planFiles()) {
      fileBytes += task.file().fileSizeInBytes();
      rows += task.file().recordCount();
      files++;
    }
    assertThat(rows).isEqualTo(n);
    long summaryBuffered = 0;
    long sinkCommits = 0;
    for (Snapshot s : table.snapshots()) {
      summaryBuffered += Long.parseLong(s.summary().get(SnapshotSummaryKeys.BUFFERED_BYTES));
      sinkCommits++;
    }
    assertThat(Math.round(buffered * n))
        .as("plan counts exactly the bytes the sink's writer accounted")
        .isEqualTo(summaryBuffered);
    double sinkEncoded = fileBytes / (double) rows;
    assertThat(Math.abs(sinkEncoded - encoded) / sinkEncoded)
        .as("plan %.2f vs sink %.2f bytes/row", encoded, sinkEncoded)
        .isLessThan(0.01);

    // inspect: the sink's summary fields of that job
    CliRun ins =
        CliRun.of(
            "inspect",
            "--set",
            "catalog.warehouse=" + warehouse,
            "--set",
            "table.namespace=" + config.namespace(),
            "--set",
            "table.name=" + config.table(),
            "--json");
    assertThat(ins.exitCode()).as(ins.err()).isZero();
    JsonNode j = JSON.readTree(ins.out());
    assertThat(j.get("rows").asLong()).isEqualTo(n);
    assertThat(j.get("dataFiles").asInt()).isEqualTo(files);
    assertThat(j.get("totalBytes").asLong()).isEqualTo(fileBytes);
    assertThat(j.get("sinkCommits").asLong()).isEqualTo(sinkCommits);
    assertThat(j.get("partitions").asInt()).isGreaterThanOrEqualTo(1);
    assertThat(j.get("oldestKafkaTimestampMs").asLong()).isEqualTo(t0);
    assertThat(j.get("newestKafkaTimestampMs").asLong()).isEqualTo(t0 + (n - 1) * 10L);
    assertThat(j.get("closedByReason").get("end_of_input").asLong()).isEqualTo(files);
    assertThat(j.get("timeSinceLastCommitMs").asLong()).isGreaterThanOrEqualTo(0);
    assertThat(j.get("encodedPerBufferedRatio").asDouble())
        .isCloseTo(
            fileBytes / (double) summaryBuffered, org.assertj.core.data.Offset.offset(0.001));
    JsonNode sizes = j.get("fileSizes");
    assertThat(sizes.get("p10").asLong()).isLessThanOrEqualTo(sizes.get("p50").asLong());
    assertThat(sizes.get("p50").asLong()).isLessThanOrEqualTo(sizes.get("p90").asLong());
    JsonNode newest = j.get("snapshotList").get(0);
    Snapshot current = table.currentSnapshot();
    assertThat(newest.get("snapshotId").asLong()).isEqualTo(current.snapshotId());
    assertThat(newest.get("sink").asBoolean()).isTrue();
    assertThat(newest.get("rows").asLong())
        .isEqualTo(Long.parseLong(current.summary().get(SnapshotSummaryKeys.ROWS)));
    assertThat(newest.get("checkpointId").asLong())
        .isEqualTo(Long.parseLong(current.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID)));
    long minIngest = Long.parseLong(current.summary().get(SnapshotSummaryKeys.MIN_INGEST_MS));
    long maxIngest = Long.parseLong(current.summary().get(SnapshotSummaryKeys.MAX_INGEST_MS));
    assertThat(newest.get("minIngestMs").asLong()).isEqualTo(minIngest);
    assertThat(newest.get("maxAgeAtCommitMs").asLong())
        .isEqualTo(current.timestampMillis() - minIngest);
    assertThat(newest.get("minAgeAtCommitMs").asLong())
        .isEqualTo(current.timestampMillis() - maxIngest);
    assertThat(newest.get("closedByReason").get("end_of_input").asLong()).isPositive();
    for (String field :
        new String[] {"fileBytes", "bufferedBytes", "files", "flinkJobId", "committedAt"}) {
      assertThat(newest.has(field)).as(field).isTrue();
    }

    CliRun limited =
        CliRun.of("inspect", "--set", "catalog.warehouse=" + warehouse, "--limit", "0", "--json");
    assertThat(JSON.readTree(limited.out()).get("snapshotList")).isEmpty();
    CliRun text = CliRun.of("inspect", "--set", "catalog.warehouse=" + warehouse);
    assertThat(text.exitCode()).isZero();
    assertThat(text.out())
        .contains("data files             " + files)
        .contains("end_of_input=" + files);
  }
}
