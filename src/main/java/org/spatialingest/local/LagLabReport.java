package org.spatialingest.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.spatialingest.local.LagLab.Commit;
import org.spatialingest.local.LagLab.ScenarioResult;
import org.spatialingest.tools.SvgChart;

/**
 * Writes the lab's {@code results.json}, a self-contained {@code lab.html} chart, and the summary
 * table.
 */
public final class LagLabReport {
  private static final String[] COLORS = SvgChart.COLORS;

  private LagLabReport() {}

  /**
   * Age at commit (committed − ingress) quantiles of a scenario, in milliseconds: p50, p95, max.
   */
  public static long[] ageAtCommit(ScenarioResult r) {
    long[] ages =
        r.events().stream().mapToLong(e -> e.committedMs() - e.ingressMs()).sorted().toArray();
    if (ages.length == 0) {
      return new long[] {0, 0, 0};
    }
    return new long[] {quantile(ages, 0.50), quantile(ages, 0.95), ages[ages.length - 1]};
  }

  public static void write(List<ScenarioResult> results, Path out) throws IOException {
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put(
        "note",
        "single-run observations on a shared machine, not a benchmark with confidence intervals");
    doc.put(
        "boundary",
        Map.of(
            "ingress", "Kafka record timestamp (CreateTime, set by the producer)",
            "processingStart", "when the transform takes the record",
            "committed", "timestamp of the Iceberg snapshot that holds the row"));
    doc.put("scenarios", results.stream().map(LagLabReport::summary).toList());
    doc.put("details", results);
    json.writeValue(out.resolve("results.json").toFile(), doc);
    Files.writeString(out.resolve("lab.html"), html(results));
  }

  static Map<String, Object> summary(ScenarioResult r) {
    long[] age = ageAtCommit(r);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("scenario", r.scenario().name());
    m.put("description", r.scenario().description());
    m.put("offeredRateNominal", r.scenario().offeredRate());
    m.put("offeredRate", round(r.offeredRateActual()));
    m.put("admittedRate", round(r.admittedRate()));
    m.put("injectedDelayMicros", r.scenario().injectedDelayMicros());
    m.put("admissionCap", r.scenario().admissionCap());
    m.put("ageAtCommitP50Ms", age[0]);
    m.put("ageAtCommitP95Ms", age[1]);
    m.put("ageAtCommitMaxMs", age[2]);
    m.put("backlogAtEndOfInput", r.backlogAtEndOfInput());
    m.put("produced", r.produced());
    m.put("commits", r.commits().size());
    m.put("everyIdCommittedOnce", r.everyIdCommittedOnce());
    m.put("restarts", r.health().restarts());
    m.put("failedCheckpoints", r.health().failedCheckpoints());
    return m;
  }

  public static void printTable(List<ScenarioResult> results, PrintStream out) {
    out.println();
    out.printf(
        "%-14s %10s %10s %9s %9s %9s %10s %8s%n",
        "scenario",
        "offered/s",
        "admitted/s",
        "age p50",
        "age p95",
        "age max",
        "backlog@end",
        "once");
    for (ScenarioResult r : results) {
      long[] age = ageAtCommit(r);
      out.printf(
          Locale.ROOT,
          "%-14s %10.0f %10.0f %8.1fs %8.1fs %8.1fs %10d %8s%n",
          r.scenario().name(),
          r.offeredRateActual(),
          r.admittedRate(),
          age[0] / 1e3,
          age[1] / 1e3,
          age[2] / 1e3,
          r.backlogAtEndOfInput(),
          r.everyIdCommittedOnce() ? "yes" : "NO");
    }
    out.println("(age = commit time - Kafka timestamp; single-run observations, not a benchmark)");
  }

  private static String html(List<ScenarioResult> results) {
    int w = 760;
    int h = 300;
    int pad = 50;
    double maxT = 1;
    double maxAge = 1;
    for (ScenarioResult r : results) {
      long t0 = r.events().isEmpty() ? 0 : r.events().get(0).ingressMs();
      for (Commit c : r.commits()) {
        maxT = Math.max(maxT, (c.committedMs() - t0) / 1e3);
        maxAge = Math.max(maxAge, c.oldestAgeMs() / 1e3);
      }
    }
    StringBuilder svg = new StringBuilder();
    svg.append(
        String.format(
            Locale.ROOT, "<svg width='%d' height='%d' xmlns='http://www.w3.org/2000/svg'>", w, h));
    SvgChart.axes(
        svg,
        w,
        h,
        pad,
        maxT,
        maxAge,
        "seconds since the scenario's first event",
        "oldest row's age at commit (s)");
    for (int i = 0; i < results.size(); i++) {
      ScenarioResult r = results.get(i);
      long t0 = r.events().isEmpty() ? 0 : r.events().get(0).ingressMs();
      StringBuilder pts = new StringBuilder();
      for (Commit c : r.commits()) {
        double x = pad + (c.committedMs() - t0) / 1e3 / maxT * (w - 2 * pad);
        double y = h - pad - c.oldestAgeMs() / 1e3 / maxAge * (h - 2 * pad);
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
      }
      svg.append(
          String.format(
              "<polyline fill='none' stroke='%s' stroke-width='2' points='%s'/>",
              COLORS[i % COLORS.length], pts));
      svg.append(
          String.format(
              Locale.ROOT,
              "<text x='%d' y='%d' fill='%s' font-size='12'>%s</text>",
              w - 150,
              20 + 16 * i,
              COLORS[i % COLORS.length],
              r.scenario().name()));
    }
    svg.append("</svg>");

    double maxRate = 1;
    for (ScenarioResult r : results) {
      maxRate = Math.max(maxRate, Math.max(r.offeredRateActual(), r.admittedRate()));
    }
    StringBuilder bars = new StringBuilder();
    bars.append(
        String.format(
            Locale.ROOT, "<svg width='%d' height='%d' xmlns='http://www.w3.org/2000/svg'>", w, h));
    SvgChart.axes(bars, w, h, pad, 0, maxRate, "", "records/s");
    int slot = (w - 2 * pad) / Math.max(1, results.size());
    for (int i = 0; i < results.size(); i++) {
      ScenarioResult r = results.get(i);
      double[] values = {r.offeredRateActual(), r.admittedRate()};
      String[] fills = {"#bbbbbb", COLORS[i % COLORS.length]};
      for (int k = 0; k < 2; k++) {
        double bh = values[k] / maxRate * (h - 2 * pad);
        bars.append(
            String.format(
                Locale.ROOT,
                "<rect x='%d' y='%.1f' width='%d' height='%.1f' fill='%s'/>",
                pad + i * slot + 10 + k * (slot / 2 - 10),
                h - pad - bh,
                slot / 2 - 20,
                bh,
                fills[k]));
      }
      bars.append(
          String.format(
              Locale.ROOT,
              "<text x='%d' y='%d' font-size='12'>%s: offered (grey) vs admitted" + "</text>",
              pad + i * slot + 10,
              h - pad + 18,
              r.scenario().name()));
    }
    bars.append("</svg>");

    StringBuilder rows = new StringBuilder();
    for (ScenarioResult r : results) {
      long[] age = ageAtCommit(r);
      rows.append(
          String.format(
              Locale.ROOT,
              "<tr><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.1f</td><td>%.1f</td>"
                  + "<td>%.1f</td><td>%d</td><td>%s</td></tr>",
              r.scenario().name(),
              r.offeredRateActual(),
              r.admittedRate(),
              age[0] / 1e3,
              age[1] / 1e3,
              age[2] / 1e3,
              r.backlogAtEndOfInput(),
              r.everyIdCommittedOnce() ? "yes" : "NO"));
    }
    return "<!doctype html><html><head><meta charset='utf-8'><title>spatial-ingest lag lab</title>"
        + "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;text-align:right}</style></head><body>"
        + "<h1>Lag lab</h1><p>Age = commit time &minus; Kafka timestamp (ingress). Single-run observations on a shared "
        + "machine, not a benchmark with confidence intervals. The overload scenario's per-record delay is artificial."
        + "</p><table><tr><th>scenario</th><th>offered/s</th><th>admitted/s</th><th>age p50 s</th><th>age p95 s</th>"
        + "<th>age max s</th><th>backlog at end of input</th><th>every id once</th></tr>"
        + rows
        + "</table>"
        + "<h2>Age at commit over time</h2>"
        + svg
        + "<h2>Offered vs admitted rate</h2>"
        + bars
        + "</body></html>";
  }

  private static double round(double v) {
    return Math.round(v * 10) / 10.0;
  }

  private static long quantile(long[] sorted, double q) {
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
