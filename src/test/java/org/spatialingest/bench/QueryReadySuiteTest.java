package org.spatialingest.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.sizing.Units;

/**
 * Keeps the {@code suite=query-ready} preset and {@code query-ready.json} honest without running
 * the benchmark: what the preset expands to, that arguments after it win, the JSON's field names
 * (the issue's list, spelled out here so that a rename fails), and that rows returned that differ
 * between pipelines fail the run.
 */
class QueryReadySuiteTest {
  /** The fields issue #24 asks of every object of query-ready.json. */
  private static final List<String> ISSUE_FIELDS =
      List.of(
          "variant",
          "phase",
          "workload",
          "rows",
          "cpuSecondsPerMillionRows",
          "cpuSecondsPerMillionRowsNoJit",
          "filesAtEnd",
          "p50FileBytes",
          "bboxFilesPlannedMedian",
          "bboxBytesReadMedian",
          "timeRangeFilesPlannedMedian",
          "timeRangeBytesReadMedian",
          "rowsReturnedTotal",
          "round");

  @Test
  void theQueryReadySuiteRunsTheIssuesPhasesVariantsAndRounds() {
    RoundSettings r = RoundSettings.parse(new String[] {"suite=query-ready"});
    BenchSettings s = BenchSettings.parse(r.rest());

    assertThat(r.live()).isTrue();
    assertThat(r.liveVariants()).containsExactly("A", "BR");
    assertThat(r.liveWorkload()).isEqualTo("points");
    assertThat(r.liveRounds()).isEqualTo(3); // issue #36: at least 3 live rounds
    assertThat(r.throughput()).isTrue();
    assertThat(r.rounds()).isEqualTo(5); // issue #36: at least 5 interleaved rounds
    assertThat(r.warmupShareFor("mix")).isEqualTo(0.1);
    assertThat(r.warmupShareFor("points")).isEqualTo(1.0); // a warm JIT: ratios that hold
    assertThat(r.workloads()).containsExactly("points", "mix");
    assertThat(r.variants()).containsExactly("A", "B", "BR", "BRC", "F");
    assertThat(r.variantsFor("mix")).containsExactly("A", "B", "BR", "BRC", "F");
    assertThat(r.variantsFor("points")).containsExactly("A", "B", "BR", "F");
    assertThat(r.liveReport()).isFalse(); // no B in the live phase: no side-by-side A/B page
    assertThat(Units.parseBytes(s.target())).isEqualTo(1_000_000L);
  }

  @Test
  void argumentsAfterTheSuiteOverrideIt() {
    RoundSettings r =
        RoundSettings.parse(new String[] {"suite=query-ready", "rounds=1", "duration=20s"});

    assertThat(r.rounds()).isEqualTo(1);
    assertThat(BenchSettings.parse(r.rest()).duration().toSeconds()).isEqualTo(20);
    assertThatThrownBy(() -> RoundSettings.parse(new String[] {"suite=fast"}))
        .hasMessageContaining("suite must be one of [ingest, production, query-ready]: fast");
  }

  @Test
  void theIngestSuiteIsPointsOnlyWithAWarmUpAsLongAsTheMeasuredJob() {
    RoundSettings r = RoundSettings.parse(new String[] {"suite=ingest"});

    assertThat(r.live()).isFalse();
    assertThat(r.queries()).isFalse();
    assertThat(r.workloads()).containsExactly("points");
    assertThat(r.variantsFor("points")).containsExactly("A", "B", "F");
    assertThat(r.rounds()).isGreaterThanOrEqualTo(5); // issue #58: >= 5 interleaved rounds
    assertThat(r.pointsWarmupShare()).isEqualTo(1.0);
  }

  @Test
  void theProductionSuiteIsADayOfPointsAtProductionsBounds() {
    RoundSettings r = RoundSettings.parse(new String[] {"suite=production"});
    BenchSettings s = BenchSettings.parse(r.rest());

    assertThat(r.live()).isFalse();
    assertThat(r.queries()).isTrue(); // bbox and time-range bytes read are what it reports
    assertThat(r.variantsFor("points")).containsExactly("A", "B", "BR", "F");
    // issue #36 item 5: >= 5 M points over 24 h of event time (the backlog's spacing is 1/rate s)
    assertThat(r.pointsBacklog()).isGreaterThanOrEqualTo(5_000_000);
    assertThat(Duration.ofMillis(r.pointsBacklog() * 1000L / s.rate()))
        .isGreaterThanOrEqualTo(Duration.ofHours(24));
    assertThat(Units.parseBytes(s.target())).isGreaterThanOrEqualTo(32_000_000L);
    assertThat(s.latency()).isEqualTo(Duration.ofSeconds(60));
    assertThat(s.checkpoint()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void everyObjectOfQueryReadyJsonHasTheIssuesFields(@TempDir Path dir) throws Exception {
    QueryReadyReport report = new QueryReadyReport();
    ReaderCost.Result end = result(7, 3);
    report.add(
        QueryReadyReport.Row.of(
            "throughput", "points", 2, 2_000_000, run("BRC", 5_000, 1_000), null, end),
        null,
        end,
        dir);
    ReaderCost.Result mid = result(2, 1);
    report.add(
        QueryReadyReport.Row.of("live", "points", 1, 1_000_000, run("A", 3_000, 500), mid, end),
        mid,
        end,
        dir);

    JsonNode json = new ObjectMapper().readTree(dir.resolve("query-ready.json").toFile());
    assertThat(json.size()).isEqualTo(2);
    for (JsonNode row : json) {
      for (String field : ISSUE_FIELDS) {
        assertThat(row.has(field)).as("field %s of %s", field, row).isTrue();
      }
    }
    JsonNode brc = json.get(0);
    assertThat(brc.get("variant").asText()).isEqualTo("BRC");
    assertThat(brc.get("round").asInt()).isEqualTo(2);
    assertThat(brc.get("cpuSecondsPerMillionRows").asDouble()).isEqualTo(2.5); // 5 s / 2 M
    assertThat(brc.get("cpuSecondsPerMillionRowsNoJit").asDouble()).isEqualTo(2.0);
    assertThat(brc.get("bboxFilesPlannedMedian").asDouble()).isEqualTo(7);
    assertThat(brc.get("timeRangeFilesPlannedMedian").asDouble()).isEqualTo(3);
    assertThat(brc.get("timeRangeBytesReadMedian").asDouble()).isEqualTo(2_000);
    // live: the query fields are the mid-phase ones
    assertThat(json.get(1).get("bboxFilesPlannedMedian").asDouble()).isEqualTo(2);
    assertThat(json.get(1).get("endBboxFilesPlannedMedian").asDouble()).isEqualTo(7);
  }

  @Test
  void theSinkOverheadIsTakenAboveTheFloorWithinEachRound() {
    RoundSettings r =
        RoundSettings.parse(new String[] {"phases=throughput", "rounds=2", "variants=A,B,F"});
    ThroughputReport t = new ThroughputReport(BenchSettings.parse(r.rest()), r);
    // round 1: A 5 s, B 7 s, F 3 s of CPU without JIT -> (5-3)/(7-3) = 0.5
    t.add("points", 1_000, 1, "A", run("A", 6_000, 1_000));
    t.add("points", 1_000, 1, "B", run("B", 7_500, 500));
    t.add("points", 1_000, 1, "F", run("F", 3_000, 0));
    // round 2 has no F: no overhead figure for it
    t.add("points", 1_000, 2, "A", run("A", 5_000, 0));
    t.add("points", 1_000, 2, "B", run("B", 6_000, 0));

    assertThat(t.overheadRatios("points", "A", "B")).containsExactly(0.5);
    assertThat(t.cpuRatiosWithoutJit("points", "A", "B")).hasSize(2);
  }

  @Test
  void twoRunsGoalsAgreeWhenTheirMediansLieWithinTenPerCent(@TempDir Path dir) throws Exception {
    Goal.write(
        List.of(
            new Goal("overhead, points", "≤ 0.67", new double[] {0.80, 0.90, 1.00}),
            new Goal("bytes, mix", "≤ 0.3", new double[] {0.40, 0.40, 0.50}),
            new Goal("not measured", "≤ 1", new double[0])),
        dir.resolve("1.json"));
    Goal.write(
        List.of(
            new Goal("overhead, points", "≤ 0.67", new double[] {0.95, 0.97, 0.99}),
            new Goal("bytes, mix", "≤ 0.3", new double[] {0.50, 0.50, 0.60})),
        dir.resolve("2.json"));

    List<Goal> first = Goal.read(dir.resolve("1.json"));
    assertThat(first).hasSize(2); // a goal without rounds is not written
    assertThat(first.get(0).spread())
        .isCloseTo(0.2 / 0.9, org.assertj.core.data.Offset.offset(1e-9));
    String md = Goal.compare(first, Goal.read(dir.resolve("2.json")));
    assertThat(md)
        .contains("| overhead, points | ≤ 0.67 | 0.90 (22 %) | 0.97 (4 %) | +7.8 % | yes |");
    assertThat(md)
        .contains("| bytes, mix | ≤ 0.3 | 0.40 (25 %) | 0.50 (20 %) | +25.0 % | **no** |");
    assertThat(md).contains("1 of 2 goals agree within 10 %.");
  }

  @Test
  void rowsReturnedThatDifferBetweenPipelinesFailTheRun(@TempDir Path dir) throws Exception {
    QueryReadyReport report = new QueryReadyReport();
    ReaderCost.Result a = result(4, 2);
    report.add(
        QueryReadyReport.Row.of("throughput", "mix", 1, 1_000, run("A", 10, 1), null, a),
        null,
        a,
        dir);
    ReaderCost.Result other =
        new ReaderCost.Result(
            List.of(
                new ReaderCost.QueryResult("bbox-1", 4, 1, 1, 10, 99, 1),
                new ReaderCost.QueryResult("time-1", 2, 1, 1, 10, 100, 1)));

    assertThatThrownBy(
            () ->
                report.add(
                    QueryReadyReport.Row.of(
                        "throughput", "mix", 1, 1_000, run("BR", 10, 1), null, other),
                    null,
                    other,
                    dir))
        .hasMessageContaining("BUG: the same queries on the same rows returned different rows")
        .hasMessageContaining("throughput mix round 1 BR [99, 100]");
  }

  @Test
  void theQuerySetIsFixedByItsInputAndSeed() {
    List<double[]> positions = List.of(new double[] {2, 48}, new double[] {13, 52});
    QuerySet a = QuerySet.of(positions, 1_000, 61_000, 42);
    QuerySet b = QuerySet.of(positions, 1_000, 61_000, 42);

    assertThat(a.queries()).hasSize(25);
    assertThat(a.queries().stream().filter(QuerySet.Query::bbox)).hasSize(20);
    for (int i = 0; i < 25; i++) {
      assertThat(a.queries().get(i).filter().toString())
          .isEqualTo(b.queries().get(i).filter().toString());
    }
    QuerySet.Query last = a.queries().get(24);
    assertThat(last.toMillis()).isEqualTo(61_001); // the fifth range ends after the last event
    assertThat(last.toMillis() - last.fromMillis()).isEqualTo(3_600_000);
  }

  /** A query set's result: one bbox and one time query with these files planned. */
  private static ReaderCost.Result result(int bboxFiles, int timeFiles) {
    return new ReaderCost.Result(
        List.of(
            new ReaderCost.QueryResult("bbox-1", bboxFiles, 1, 2, 1_000, 10, 5),
            new ReaderCost.QueryResult("time-1", timeFiles, 2, 2, 2_000, 20, 5)));
  }

  /** A run that became query-ready after {@code cpuMs} of CPU, {@code jitMs} of it the JIT's. */
  private static RunResult run(String variant, long cpuMs, long jitMs) {
    return new RunResult(
        variant,
        "throughput",
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        1,
        0,
        Map.of(),
        0,
        0,
        0,
        0,
        0,
        0,
        cpuMs,
        jitMs,
        0,
        "FileSystemCheckpointStorage",
        null,
        true,
        1_000,
        cpuMs,
        jitMs,
        1,
        new TableStats.Metadata(1, 1));
  }
}
