package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What a query-ready table costs each pipeline, and what a reader pays for it (issue #24): one
 * {@link Row} per (phase, workload, variant, round), written to {@code query-ready.json} (an array
 * of them) and {@code query-ready.md}; each query's own figures go to {@code queries.json}.
 *
 * <p>The rows a query returns must be the same for every pipeline of a phase and workload at the
 * end of the phase (every table then holds the same rows): {@link #add} fails the run at the first
 * difference. In the middle of the live phase the tables differ by design (ours commits every L,
 * Iceberg's sink every C), so those counts are reported, not compared.
 */
final class QueryReadyReport {
  /**
   * The figures of one run, and a few more. For {@code live}, the query fields are the ones
   * taken in the middle of the phase, while the table is live; the {@code end*} ones after it. CPU
   * figures are per million input rows, from the first record read to the moment the table was
   * query-ready (null if it never was), the {@code NoJit} ones without the JIT compiler threads'.
   */
  record Row(
      String variant,
      String phase,
      String workload,
      int round,
      long rows,
      long rowsCommitted,
      boolean queryReady,
      Double cpuSecondsPerMillionRows,
      Double cpuSecondsPerMillionRowsNoJit,
      double secondsToQueryReady,
      double ingestCpuSecondsPerMillionRowsNoJit,
      int filesAtEnd,
      long p50FileBytes,
      Double bboxFilesPlannedMedian,
      Double bboxBytesReadMedian,
      Double timeRangeFilesPlannedMedian,
      Double timeRangeBytesReadMedian,
      Long rowsReturnedTotal,
      Long rowsInSnapshot,
      Double bboxBytesReadPerRow,
      Double endBboxFilesPlannedMedian,
      Double endBboxBytesReadMedian,
      Double endTimeRangeFilesPlannedMedian,
      Long endRowsReturnedTotal) {

    /**
     * @param rows the input rows (the table must hold them all; F discards them)
     * @param mid the query set in the middle of the live phase, null otherwise
     * @param end the query set after the phase, null for F
     */
    static Row of(
        String phase,
        String workload,
        int round,
        long rows,
        RunResult r,
        ReaderCost.Result mid,
        ReaderCost.Result end) {
      double millions = rows / 1e6;
      ReaderCost.Result shown = mid != null ? mid : end;
      return new Row(
          r.variant(),
          phase,
          workload,
          round,
          rows,
          r.rowsCommitted(),
          r.queryReady(),
          r.queryReady() ? r.queryReadyCpuMs() / 1000.0 / millions : null,
          r.queryReady() ? r.queryReadyCpuMsWithoutJit() / 1000.0 / millions : null,
          r.queryReady() ? r.queryReadyMs() / 1000.0 : Double.NaN,
          r.readToEndCpuMsWithoutJit() / 1000.0 / millions,
          r.dataFiles(),
          r.fileP50(),
          figure(shown, ReaderCost.Result::bboxFilesPlannedMedian),
          figure(shown, ReaderCost.Result::bboxBytesReadMedian),
          figure(shown, ReaderCost.Result::timeRangeFilesPlannedMedian),
          figure(shown, ReaderCost.Result::timeRangeBytesReadMedian),
          shown == null ? null : shown.rowsReturnedTotal(),
          shown == null || shown.rowsInSnapshot() < 0 ? null : shown.rowsInSnapshot(),
          figure(shown, ReaderCost.Result::bboxBytesReadPerRow),
          figure(end, ReaderCost.Result::bboxFilesPlannedMedian),
          figure(end, ReaderCost.Result::bboxBytesReadMedian),
          figure(end, ReaderCost.Result::timeRangeFilesPlannedMedian),
          end == null ? null : end.rowsReturnedTotal());
    }

    private static Double figure(ReaderCost.Result r, Function<ReaderCost.Result, Double> f) {
      return r == null ? null : f.apply(r);
    }
  }

  /** The goals of issue #24, as ratios measured side by side in one run. */
  static final double GOAL_QUERY_READY_CPU = 0.67;

  static final double GOAL_THROUGHPUT = 1.2;
  static final double GOAL_LIVE_FILES_AND_BYTES = 0.5;

  /** Issue #36: the sink's own CPU per row at most this times IcebergSink's. */
  static final double GOAL_SINK_OVERHEAD = 0.67;

  /** Issue #36: after a phase, a 10° box reads at most this share of BR's bytes. */
  static final double GOAL_END_BYTES = 0.3;

  private final List<Row> rows = new ArrayList<>();
  private final List<Map<String, Object>> queries = new ArrayList<>();

  /** phase/workload -> the first run's end-of-phase rows returned per query, and its name. */
  private final Map<String, Map.Entry<String, List<Long>>> reference = new LinkedHashMap<>();

  /**
   * Adds a run; fails if its end-of-phase query results differ from an earlier run's of the same
   * phase and workload (after recording it, so the files show the difference).
   */
  void add(Row row, ReaderCost.Result mid, ReaderCost.Result end, Path dir) throws IOException {
    rows.add(row);
    String name =
        row.phase() + " " + row.workload() + " round " + row.round() + " " + row.variant();
    for (Map.Entry<String, ReaderCost.Result> e : sets(mid, end).entrySet()) {
      for (ReaderCost.QueryResult q : e.getValue().queries()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", name);
        m.put("when", e.getKey());
        m.put("query", q);
        queries.add(m);
      }
    }
    write(dir);
    if (end == null || !end.rowsRead()) {
      return;
    }
    String key = row.phase() + "/" + row.workload();
    Map.Entry<String, List<Long>> first = reference.get(key);
    if (first == null) {
      reference.put(key, Map.entry(name, end.rowsReturned()));
    } else if (!first.getValue().equals(end.rowsReturned())) {
      throw new IllegalStateException(
          "BUG: the same queries on the same rows returned different rows: "
              + name
              + " "
              + end.rowsReturned()
              + " vs "
              + first.getKey()
              + " "
              + first.getValue()
              + " (per query, in the order of queries.json)");
    }
  }

  private static Map<String, ReaderCost.Result> sets(ReaderCost.Result mid, ReaderCost.Result end) {
    Map<String, ReaderCost.Result> m = new LinkedHashMap<>();
    if (mid != null) {
      m.put("mid-phase", mid);
    }
    if (end != null) {
      m.put("end-of-phase", end);
    }
    return m;
  }

  List<Row> rows() {
    return List.copyOf(rows);
  }

  void write(Path dir) throws IOException {
    ObjectMapper json = new ObjectMapper();
    json.writerWithDefaultPrettyPrinter()
        .writeValue(dir.resolve("query-ready.json").toFile(), rows);
    json.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("queries.json").toFile(), queries);
  }

  void writeMarkdown(Path dir, String md) throws IOException {
    Files.writeString(dir.resolve("query-ready.md"), md);
  }

  /** The results table and the goals' measured distances. */
  String markdown(BenchSettings settings, RoundSettings rounds, ThroughputReport tput) {
    StringBuilder md = new StringBuilder();
    md.append("## Query-ready cost and reader cost (issue #24)\n\n")
        .append(BenchReport.whenAndWhere())
        .append(". ")
        .append(rounds.describe())
        .append(". Scenario: ")
        .append(settings.describe())
        .append(
            ". Query-ready: every row committed in files of median size ≥ T/2. CPU = the child"
                + " JVM's, per million input rows, from the first record read to query-ready"
                + " (compaction included); \"no JIT\" without the JIT compiler threads. Queries"
                + " (20 bbox 10°×10°, 5 one-hour event_time ranges) through Iceberg's read path;"
                + " live: in the middle of the phase (rows returned differ there by commit lag),"
                + " otherwise after it.\n\n");
    md.append(
        "| phase | workload | round | variant | query-ready | s to ready | CPU s/M rows (no JIT)"
            + " | files | p50 MB | bbox files (median) | bbox MB read (median) | time files"
            + " (median) | time MB read (median) | rows returned |\n");
    md.append("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %s | %s | %s | %s | %d | %.1f | %s | %s | %s | %s | %s |%n",
              r.phase(),
              r.workload(),
              r.round(),
              r.variant(),
              r.variant().equals("F") ? "n/a" : r.queryReady() ? "yes" : "**never**",
              r.queryReady() ? String.format(Locale.ROOT, "%.1f", r.secondsToQueryReady()) : "–",
              r.queryReady()
                  ? String.format(
                      Locale.ROOT,
                      "%.2f (%.2f)",
                      r.cpuSecondsPerMillionRows(),
                      r.cpuSecondsPerMillionRowsNoJit())
                  : String.format(
                      Locale.ROOT,
                      "– (ingest only: %.2f)",
                      r.ingestCpuSecondsPerMillionRowsNoJit()),
              r.filesAtEnd(),
              r.p50FileBytes() / 1e6,
              num(r.bboxFilesPlannedMedian(), "%.1f"),
              r.bboxBytesReadMedian() == null
                  ? "–"
                  : String.format(Locale.ROOT, "%.2f", r.bboxBytesReadMedian() / 1e6),
              num(r.timeRangeFilesPlannedMedian(), "%.1f"),
              r.timeRangeBytesReadMedian() == null
                  ? "–"
                  : String.format(Locale.ROOT, "%.2f", r.timeRangeBytesReadMedian() / 1e6),
              r.rowsReturnedTotal() == null
                  ? "–"
                  : String.format(Locale.ROOT, "%,d", r.rowsReturnedTotal())));
    }
    md.append("\n### Goals, measured\n\n");
    goals(tput).stream()
        .filter(g -> g.rounds().length > 0)
        .forEach(g -> md.append(g.markdownLine()));
    return md.toString();
  }

  /**
   * The goals of issues #24 and #36 as per-round ratios measured side by side (a goal whose
   * variants did not run has no rounds).
   */
  List<Goal> goals(ThroughputReport tput) {
    List<Goal> goals = new ArrayList<>();
    String qr = String.format(Locale.ROOT, "≤ %.2f", GOAL_QUERY_READY_CPU);
    for (String phase : List.of("live", "throughput")) {
      for (String w : List.of("points", "mix")) {
        goals.add(
            new Goal(
                "query-ready CPU, ours/BRC, " + phase + " " + w,
                qr,
                ratios(phase, w, "A", "BRC", Row::cpuSecondsPerMillionRows)));
        goals.add(
            new Goal(
                "query-ready CPU without JIT, ours/BRC, " + phase + " " + w,
                qr,
                ratios(phase, w, "A", "BRC", Row::cpuSecondsPerMillionRowsNoJit)));
      }
    }
    for (String w : List.of("points", "mix")) {
      for (String other : List.of("B", "BR")) {
        goals.add(
            new Goal(
                "throughput by CPU without JIT, ours/" + other + ", " + w,
                String.format(Locale.ROOT, "≥ %.1f", GOAL_THROUGHPUT),
                tput.cpuRatiosWithoutJit(w, "A", other)));
      }
      goals.add(
          new Goal(
              "sink overhead by CPU without JIT, (A−F)/(B−F), " + w,
              String.format(Locale.ROOT, "≤ %.2f", GOAL_SINK_OVERHEAD),
              tput.overheadRatios(w, "A", "B")));
      double sums = tput.overheadOfSums(w, "A", "B");
      goals.add(
          new Goal(
              "sink overhead by CPU without JIT over the rounds' sums, Σ(A−F)/Σ(B−F), " + w,
              String.format(Locale.ROOT, "≤ %.2f", GOAL_SINK_OVERHEAD),
              Double.isNaN(sums) ? new double[0] : new double[] {sums}));
      goals.add(
          new Goal(
              "sink overhead by CPU without JIT, (A−F)/(BR−F), " + w,
              "none",
              tput.overheadRatios(w, "A", "BR")));
    }
    String live = String.format(Locale.ROOT, "≤ %.1f", GOAL_LIVE_FILES_AND_BYTES);
    for (String w : List.of("points", "mix")) {
      goals.add(
          new Goal(
              "live table, middle of the phase, bbox files planned ours/BR, " + w,
              live,
              ratios("live", w, "A", "BR", Row::bboxFilesPlannedMedian)));
      goals.add(
          new Goal(
              "live table, middle of the phase, bbox bytes read ours/BR, " + w,
              live,
              ratios("live", w, "A", "BR", Row::bboxBytesReadMedian)));
      // mid-phase the tables hold different shares of the input (ours commits every L, BR every
      // C): per row the snapshot held, the bytes compare the layouts, not the commit lag
      goals.add(
          new Goal(
              "live table, middle of the phase, bbox bytes read per committed row ours/BR, " + w,
              "none",
              ratios("live", w, "A", "BR", Row::bboxBytesReadPerRow)));
    }
    for (String w : List.of("points", "mix")) {
      goals.add(
          new Goal(
              "end of the throughput phase, bbox bytes read ours/BR, " + w,
              String.format(Locale.ROOT, "≤ %.1f", GOAL_END_BYTES),
              ratios("throughput", w, "A", "BR", Row::endBboxBytesReadMedian)));
      goals.add(
          new Goal(
              "end of the throughput phase, bbox files planned ours/BR, " + w,
              "none",
              ratios("throughput", w, "A", "BR", Row::endBboxFilesPlannedMedian)));
      goals.add(
          new Goal(
              "end of the throughput phase, bbox bytes read ours/B, " + w,
              "none",
              ratios("throughput", w, "A", "B", Row::endBboxBytesReadMedian)));
    }
    return goals;
  }

  /** {@code num/den} of a figure per round of a phase and workload where both have it. */
  double[] ratios(
      String phase, String workload, String num, String den, Function<Row, Double> figure) {
    List<Double> out = new ArrayList<>();
    for (Row n : rows) {
      if (!n.phase().equals(phase) || !n.workload().equals(workload) || !n.variant().equals(num)) {
        continue;
      }
      for (Row d : rows) {
        if (d.phase().equals(phase)
            && d.workload().equals(workload)
            && d.variant().equals(den)
            && d.round() == n.round()
            && figure.apply(n) != null
            && figure.apply(d) != null
            && figure.apply(d) != 0) {
          out.add(figure.apply(n) / figure.apply(d));
        }
      }
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  private static String num(Double v, String format) {
    return v == null || v.isNaN() ? "–" : String.format(Locale.ROOT, format, v);
  }
}
