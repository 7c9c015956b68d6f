package org.spatialingest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One goal of the preset as the ratio it measured in each round, e.g. "sink overhead (A−F)/(B−F),
 * points": the lines of {@code query-ready.md}'s summary and the objects of {@code goals.json},
 * which {@link #main} compares across two runs (issue #36: two runs on one machine agree within 10
 * % on each goal's median).
 *
 * @param name what is measured, with its workload
 * @param target the goal, e.g. "≤ 0.67"
 * @param rounds the ratio in each round that measured it
 */
record Goal(String name, String target, double[] rounds) {

  /** How far two runs' medians may lie apart (relative to the first) and still agree. */
  static final double AGREEMENT = 0.10;

  double median() {
    return ThroughputReport.median(rounds);
  }

  /** (max − min) / median over the rounds: the goal's own spread within one run. */
  double spread() {
    double min = Arrays.stream(rounds).min().orElseThrow();
    double max = Arrays.stream(rounds).max().orElseThrow();
    return (max - min) / median();
  }

  String markdownLine() {
    return String.format(
        Locale.ROOT,
        "- %s (goal %s): %s%s%n",
        name,
        target,
        ThroughputReport.summary(rounds),
        rounds.length == 0 ? "" : String.format(Locale.ROOT, ", spread %.0f %%", spread() * 100));
  }

  static void write(List<Goal> goals, Path file) throws IOException {
    List<Map<String, Object>> json = new ArrayList<>();
    for (Goal g : goals) {
      if (g.rounds.length == 0) {
        continue;
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", g.name);
      m.put("target", g.target);
      m.put("median", g.median());
      m.put("spread", g.spread());
      m.put("rounds", g.rounds);
      json.add(m);
    }
    new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(file.toFile(), json);
  }

  static List<Goal> read(Path file) throws IOException {
    List<Goal> goals = new ArrayList<>();
    for (JsonNode g : new ObjectMapper().readTree(file.toFile())) {
      double[] rounds = new double[g.get("rounds").size()];
      for (int i = 0; i < rounds.length; i++) {
        rounds[i] = g.get("rounds").get(i).asDouble();
      }
      goals.add(new Goal(g.get("name").asText(), g.get("target").asText(), rounds));
    }
    return goals;
  }

  /**
   * The comparison of two runs' goals, as markdown: each goal's median in both, their difference
   * relative to the first, and whether it is within {@link #AGREEMENT}.
   */
  static String compare(List<Goal> first, List<Goal> second) {
    StringBuilder md = new StringBuilder();
    md.append(
            "| goal | target | run 1 median (spread) | run 2 median (spread) | run 2 / run 1 − 1 |")
        .append(" within ")
        .append(Math.round(AGREEMENT * 100))
        .append(" %? |\n|---|---|---:|---:|---:|---|\n");
    int agree = 0;
    int both = 0;
    for (Goal a : first) {
      Goal b = second.stream().filter(g -> g.name.equals(a.name)).findFirst().orElse(null);
      if (b == null) {
        md.append("| ").append(a.name).append(" | ").append(a.target).append(" | ");
        md.append(String.format(Locale.ROOT, "%.2f | – | – | not in run 2 |%n", a.median()));
        continue;
      }
      double diff = b.median() / a.median() - 1;
      boolean within = Math.abs(diff) <= AGREEMENT;
      both++;
      agree += within ? 1 : 0;
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %.2f (%.0f %%) | %.2f (%.0f %%) | %+.1f %% | %s |%n",
              a.name,
              a.target,
              a.median(),
              a.spread() * 100,
              b.median(),
              b.spread() * 100,
              diff * 100,
              within ? "yes" : "**no**"));
    }
    md.append(
        String.format(
            Locale.ROOT, "%n%d of %d goals agree within %.0f %%.%n", agree, both, AGREEMENT * 100));
    return md.toString();
  }

  /**
   * Compares two runs: {@code mvn -B -Pbench verify -Dbench.class=Goal -Dbench.args="<run 1's
   * goals.json> <run 2's goals.json>"}.
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.out.println("usage: Goal <run 1's goals.json> <run 2's goals.json>");
      System.exit(2);
    }
    System.out.print(compare(read(Path.of(args[0])), read(Path.of(args[1]))));
  }
}
