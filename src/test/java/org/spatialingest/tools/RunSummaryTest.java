package org.spatialingest.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.JobStart;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.ResumeFilter;

/**
 * The bounded run's summary, from the tables a real file-source job committed to, first run and
 * re-run.
 */
class RunSummaryTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  @Test
  void summaryCountsRowsRejectsByReasonFilesAndSkippedRecords(@TempDir Path dir) throws Exception {
    List<String> lines = new ArrayList<>();
    long now = System.currentTimeMillis();
    for (int i = 0; i < 1_000; i++) {
      lines.add(
          i % 100 == 99
              ? "{\"id\":\"b" + i + "\",\"event_time\":" + now + "}"
              : "{\"id\":\"p"
                  + i
                  + "\",\"event_time\":"
                  + now
                  + ",\"geometry\":{\"type\":\"Point\",\"coordinates\":["
                  + (i % 90)
                  + ",1]}}");
    }
    lines.add("not json");
    Path in = dir.resolve("in");
    Files.createDirectories(in);
    Files.write(in.resolve("a.ndjson"), lines);
    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "source",
                "file:" + in,
                "catalog.warehouse",
                dir.resolve("warehouse").toString(),
                "checkpoint.interval",
                "300ms",
                "sink.max-latency",
                "1s"));

    RunSummary first = run(config);
    assertThat(first.rows()).isEqualTo(990);
    assertThat(first.rejects()).isEqualTo(11);
    assertThat(first.rejectsByReason())
        .containsExactlyInAnyOrderEntriesOf(Map.of("missing_geometry", 10L, "malformed_json", 1L));
    assertThat(first.read()).isEqualTo(1_001);
    assertThat(first.files()).isPositive();
    assertThat(first.snapshots()).isPositive();
    assertThat(first.line())
        .startsWith(
            "Summary: 1,001 records read: 990 rows and 11 rejects committed "
                + "(malformed_json 1, missing_geometry 10), 0 skipped as already committed;");

    // the file grew by one line: read again, its 1,001 committed records skipped
    Files.writeString(
        in.resolve("a.ndjson"),
        "{\"id\":\"q\",\"event_time\":"
            + now
            + ",\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,1]}}\n",
        java.nio.file.StandardOpenOption.APPEND);
    RunSummary again = run(config);
    assertThat(again.rows()).isEqualTo(1);
    assertThat(again.rejects()).isZero();
    assertThat(again.skipped()).isEqualTo(1_001);

    // unchanged: committed whole, not read at all
    RunSummary third = run(config);
    assertThat(third.read()).isZero();
    assertThat(third.snapshots()).isZero();
    assertThat(third.line())
        .as("says why nothing was read")
        .contains("0 skipped as already committed (1 input file not read: committed whole);");
  }

  private static RunSummary run(JobConfig config) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    JobStart decided = SpatialIngestJob.build(env, config, true);
    Instant start = Instant.now();
    JobExecutionResult result = env.execute("summary");
    Long skipped = result.getAccumulatorResult(ResumeFilter.SKIPPED_ACCUMULATOR);
    try (TableAccess tables = TableAccess.open(config)) {
      return RunSummary.of(
          tables.table(),
          tables.rejects(),
          result.getJobID().toHexString(),
          start,
          skipped == null ? 0 : skipped,
          decided.committedWhole().size());
    }
  }
}
