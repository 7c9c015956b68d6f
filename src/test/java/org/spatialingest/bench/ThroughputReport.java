package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleBiFunction;

/**
 * The throughput phase's interleaved rounds: per workload and round, records/s of each variant, and
 * the ratios within each round (A/B, A/F, B/F, A/A0), summarised as median (min–max) over the
 * rounds. A sink's cost is {@code 1 - sink/F}: the share of the floor's throughput it loses.
 */
final class ThroughputReport {
  /** Goal 1 of #13: ours at least this times Iceberg's sink. */
  static final double GOAL_A_OVER_B = 1.2;

  /** ... and our sink's cost at most this share of the floor's throughput. */
  static final double GOAL_COST = 0.25;

  private final BenchSettings settings;
  private final RoundSettings rounds;

  /** workload -> round (1-based) -> variant -> result. */
  /** The sinks ours' overhead over the floor is set against: (A − F)/(den − F). */
  static final List<String> OVERHEAD_DENOMINATORS = List.of("B", "BT", "BR");

  private final Map<String, Map<Integer, Map<String, RunResult>>> results = new LinkedHashMap<>();

  /** workload -> N. */
  private final Map<String, Integer> backlogs = new LinkedHashMap<>();

  ThroughputReport(BenchSettings settings, RoundSettings rounds) {
    this.settings = settings;
    this.rounds = rounds;
  }

  void add(String workload, int backlog, int round, String variant, RunResult r) {
    backlogs.put(workload, backlog);
    results
        .computeIfAbsent(workload, w -> new LinkedHashMap<>())
        .computeIfAbsent(round, x -> new LinkedHashMap<>())
        .put(variant, r);
  }

  /**
   * N / (first record read to the job's end): the job's start (deployment, the source's first
   * fetch), the same for every sink, is left out so that it does not dilute the ratios.
   */
  double recordsPerSecond(String workload, RunResult r) {
    return backlogs.get(workload) * 1000.0 / Math.max(1, r.readToEndMs());
  }

  /**
   * N per second of the child JVM's CPU time over the same span (all threads): what a record costs,
   * robust to waiting for a core on a shared machine.
   */
  double recordsPerCpuSecond(String workload, RunResult r) {
    return backlogs.get(workload) * 1000.0 / Math.max(1, r.readToEndCpuMs());
  }

  /**
   * As {@link #recordsPerCpuSecond} without the JIT compiler threads' CPU time: what a record costs
   * a warmed-up JVM.
   */
  double recordsPerCpuSecondWithoutJit(String workload, RunResult r) {
    return backlogs.get(workload) * 1000.0 / Math.max(1, r.readToEndCpuMsWithoutJit());
  }

  /** {@code num/den} by CPU time ({@link #recordsPerCpuSecond}) in each round that ran both. */
  double[] cpuRatios(String workload, String num, String den) {
    return ratios(workload, num, den, this::recordsPerCpuSecond);
  }

  /** {@code num/den} by {@link #recordsPerCpuSecondWithoutJit} in each round that ran both. */
  double[] cpuRatiosWithoutJit(String workload, String num, String den) {
    return ratios(workload, num, den, this::recordsPerCpuSecondWithoutJit);
  }

  /**
   * The sink's own CPU per row, {@code num}'s over {@code den}'s, in each round that ran both and
   * F: (num − F) / (den − F) by CPU time without JIT ({@link #aboveFloor}; issue #36: ours ≤ 0.67×
   * IcebergSink's).
   */
  double[] overheadRatios(String workload, String num, String den) {
    return roundsWith(workload, num, den, "F").stream()
        .mapToDouble(m -> (double) aboveFloor(m, num) / aboveFloor(m, den))
        .toArray();
  }

  /**
   * The sink's own CPU, {@code num}'s over {@code den}'s, summed over the rounds that ran both and
   * F: Σ(num − F) / Σ(den − F) by CPU time without JIT. Where den − F is small against F (the mix:
   * the transform is most of every variant's CPU), one round's ratio is the quotient of two noisy
   * differences; the sums weigh each round by its cost instead. NaN without such rounds.
   */
  double overheadOfSums(String workload, String num, String den) {
    double sumNum = 0;
    double sumDen = 0;
    List<Map<String, RunResult>> rounds = roundsWith(workload, num, den, "F");
    for (Map<String, RunResult> m : rounds) {
      sumNum += aboveFloor(m, num);
      sumDen += aboveFloor(m, den);
    }
    return rounds.isEmpty() ? Double.NaN : sumNum / sumDen;
  }

  /**
   * {@code variant}'s CPU ms without JIT above the floor F's in one round: the sink's own cost, F
   * being the same source and transform into a discarding sink.
   */
  private static long aboveFloor(Map<String, RunResult> round, String variant) {
    return round.get(variant).readToEndCpuMsWithoutJit()
        - round.get("F").readToEndCpuMsWithoutJit();
  }

  /** The rounds of {@code workload} (in order) that ran every one of {@code variants}. */
  private List<Map<String, RunResult>> roundsWith(String workload, String... variants) {
    return results.getOrDefault(workload, Map.of()).values().stream()
        .filter(m -> m.keySet().containsAll(List.of(variants)))
        .toList();
  }

  /** Each round's CPU seconds without JIT per million rows of {@code variant}'s job. */
  double[] cpuSecondsPerMillionRows(String workload, String variant) {
    return roundsWith(workload, variant).stream()
        .mapToDouble(m -> m.get(variant).readToEndCpuMsWithoutJit() * 1e3 / backlogs.get(workload))
        .toArray();
  }

  /** Each round's seconds from the first record read to the end of {@code variant}'s job. */
  double[] ingestSeconds(String workload, String variant) {
    return roundsWith(workload, variant).stream()
        .mapToDouble(m -> m.get(variant).readToEndMs() / 1000.0)
        .toArray();
  }

  /** The ratio {@code num/den} in each round of {@code workload} that ran both. */
  double[] ratios(String workload, String num, String den) {
    return ratios(workload, num, den, this::recordsPerSecond);
  }

  private double[] ratios(
      String workload, String num, String den, ToDoubleBiFunction<String, RunResult> rate) {
    return roundsWith(workload, num, den).stream()
        .mapToDouble(
            m ->
                rate.applyAsDouble(workload, m.get(num)) / rate.applyAsDouble(workload, m.get(den)))
        .toArray();
  }

  /**
   * A and B of the round of {@code workload} whose A/B is the median (the lower of two middles);
   * nulls when {@code workload} had no rounds.
   */
  RunResult[] medianRound(String workload) {
    List<Map<String, RunResult>> rs =
        new ArrayList<>(results.getOrDefault(workload, Map.of()).values());
    rs.sort(
        (x, y) ->
            Double.compare(
                recordsPerSecond(workload, x.get("A")) / recordsPerSecond(workload, x.get("B")),
                recordsPerSecond(workload, y.get("A")) / recordsPerSecond(workload, y.get("B"))));
    if (rs.isEmpty()) {
      return new RunResult[] {null, null}; // no throughput rounds of it (phases=live)
    }
    Map<String, RunResult> m = rs.get((rs.size() - 1) / 2);
    return new RunResult[] {m.get("A"), m.get("B")};
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  /** "1.23 (1.01–1.40), 3 rounds", or "n/a". */
  static String summary(double[] v) {
    return v.length == 0
        ? "n/a"
        : medianAndRange(v, "%.2f")
            + String.format(Locale.ROOT, ", %d round%s", v.length, v.length == 1 ? "" : "s");
  }

  /** "21.3 (20.1–24.0)" seconds, or "n/a". */
  static String secondsSummary(double[] v) {
    return v.length == 0 ? "n/a" : medianAndRange(v, "%.1f");
  }

  /** The median and, in brackets, the range of {@code v} (not empty), each in {@code format}. */
  private static String medianAndRange(double[] v, String format) {
    return String.format(
        Locale.ROOT,
        format + " (" + format + "–" + format + ")",
        median(v),
        Arrays.stream(v).min().orElseThrow(),
        Arrays.stream(v).max().orElseThrow());
  }

  /** The same for {@code 1 - ratio} (a sink's cost relative to the floor), in %. */
  static String costSummary(double[] ratio) {
    if (ratio.length == 0) {
      return "n/a";
    }
    double[] cost = Arrays.stream(ratio).map(r -> 1 - r).toArray();
    return String.format(
        Locale.ROOT,
        "%.0f %% (%.0f–%.0f %%)",
        median(cost) * 100,
        Arrays.stream(cost).min().orElseThrow() * 100,
        Arrays.stream(cost).max().orElseThrow() * 100);
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("## Sink benchmark, throughput phase: interleaved rounds\n\n")
        .append(BenchReport.whenAndWhere())
        .append(". ")
        .append(rounds.describe())
        .append(". Scenario: ")
        .append(settings.describe())
        .append(
            ". records/s = N / (first record read to the job's end, so without the job's start), in brackets records per second of the child JVM's CPU time over the same span (all threads: robust to waiting for a core) and of that CPU time without the JIT compiler threads' (a young JVM's cost, not a record's); A = ours, B = IcebergSink, F = discarding sink")
        .append(
            " (the floor: same source and transform), A0, A1, ... = ours from the baseline builds.\n\n");
    for (String w : results.keySet()) {
      List<String> vs = rounds.variantsFor(w);
      md.append("### Workload `")
          .append(w)
          .append(String.format(Locale.ROOT, "`, N = %,d%n%n", backlogs.get(w)));
      md.append("| round | order |");
      vs.forEach(v -> md.append(' ').append(v).append(" rec/s (per CPU-s; without JIT) |"));
      vs.stream()
          .filter(v -> !v.equals("F"))
          .forEach(v -> md.append(' ').append(v).append(" files / MB |"));
      List<String[]> pairs = pairs(vs);
      pairs.forEach(p -> md.append(' ').append(p[0]).append('/').append(p[1]).append(" |"));
      md.append("\n|---|---|");
      md.append(
          "---:|"
              .repeat(
                  vs.size()
                      + (int) vs.stream().filter(v -> !v.equals("F")).count()
                      + pairs.size()));
      md.append('\n');
      for (Map.Entry<Integer, Map<String, RunResult>> e : results.get(w).entrySet()) {
        Map<String, RunResult> m = e.getValue();
        md.append("| ")
            .append(e.getKey())
            .append(" | ")
            .append(String.join(" ", m.keySet()))
            .append(" |");
        for (String v : vs) {
          md.append(
              String.format(
                  Locale.ROOT,
                  " %,.0f (%,.0f; %,.0f) |",
                  recordsPerSecond(w, m.get(v)),
                  recordsPerCpuSecond(w, m.get(v)),
                  recordsPerCpuSecondWithoutJit(w, m.get(v))));
        }
        for (String v : vs) {
          if (!v.equals("F")) {
            RunResult r = m.get(v);
            md.append(
                String.format(Locale.ROOT, " %d / %.1f |", r.dataFiles(), r.fileBytes() / 1e6));
          }
        }
        for (String[] p : pairs) {
          md.append(
              String.format(
                  Locale.ROOT,
                  " %.2f (%.2f; %.2f) |",
                  recordsPerSecond(w, m.get(p[0])) / recordsPerSecond(w, m.get(p[1])),
                  recordsPerCpuSecond(w, m.get(p[0])) / recordsPerCpuSecond(w, m.get(p[1])),
                  recordsPerCpuSecondWithoutJit(w, m.get(p[0]))
                      / recordsPerCpuSecondWithoutJit(w, m.get(p[1]))));
        }
        md.append('\n');
      }
      md.append('\n');
      for (String[] p : pairs) {
        md.append("- **")
            .append(p[0])
            .append('/')
            .append(p[1])
            .append("**: ")
            .append(summary(ratios(w, p[0], p[1])))
            .append("; by CPU time: ")
            .append(summary(cpuRatios(w, p[0], p[1])))
            .append("; by CPU time without JIT: ")
            .append(summary(cpuRatiosWithoutJit(w, p[0], p[1])))
            .append('\n');
      }
      perVariantLine(
          md,
          "ingest, s from the first record read to the job's end",
          vs,
          v -> ingestSeconds(w, v));
      perVariantLine(
          md, "CPU seconds per million rows without JIT", vs, v -> cpuSecondsPerMillionRows(w, v));
      md.append(
          "- the tables after the last round's jobs: partitions, data files per partition, metadata"
              + " files / bytes:");
      Map<String, RunResult> last = results.get(w).values().stream().reduce((a, b) -> b).get();
      for (String v : vs) {
        RunResult r = last.get(v);
        if (!v.equals("F") && r.metadata() != null) {
          md.append(
              String.format(
                  Locale.ROOT,
                  " %s %d, %.1f, %d / %,d;",
                  v,
                  r.partitions(),
                  r.dataFiles() / (double) Math.max(1, r.partitions()),
                  r.metadata().files(),
                  r.metadata().bytes()));
        }
      }
      md.setLength(md.length() - 1);
      md.append('\n');
      if (vs.contains("F")) {
        for (String den : OVERHEAD_DENOMINATORS) {
          if (vs.contains("A") && vs.contains(den)) {
            md.append("- sink overhead (A−F)/(")
                .append(den)
                .append("−F), by CPU time without JIT: ")
                .append(summary(overheadRatios(w, "A", den)))
                .append(
                    String.format(
                        Locale.ROOT,
                        "; over the rounds' sums, Σ(A−F)/Σ(%s−F): %.2f",
                        den,
                        overheadOfSums(w, "A", den)))
                .append('\n');
          }
        }
        for (String v : vs) {
          if (!v.equals("F")) {
            md.append("- cost of ")
                .append(v)
                .append(" (1 − ")
                .append(v)
                .append("/F): ")
                .append(costSummary(ratios(w, v, "F")))
                .append("; by CPU time: ")
                .append(costSummary(cpuRatios(w, v, "F")))
                .append("; without JIT: ")
                .append(costSummary(cpuRatiosWithoutJit(w, v, "F")))
                .append('\n');
          }
        }
      }
      md.append('\n');
    }
    md.append(
        String.format(
            Locale.ROOT,
            "Goal (#13, 1): A/B ≥ %.1f on both workloads, A's cost ≤ %.0f %% of F.%n",
            GOAL_A_OVER_B,
            GOAL_COST * 100));
    return md.toString();
  }

  /** One line of {@code label}: each variant's figure over the rounds, median (min–max). */
  private static void perVariantLine(
      StringBuilder md, String label, List<String> vs, Function<String, double[]> figure) {
    md.append("- ").append(label).append(':');
    for (String v : vs) {
      md.append(' ').append(v).append(' ').append(secondsSummary(figure.apply(v))).append(';');
    }
    md.setLength(md.length() - 1);
    md.append('\n');
  }

  /** The ratios reported: A/B, A/F, B/F, A/A0 among the variants that ran. */
  private static List<String[]> pairs(List<String> vs) {
    List<String[]> pairs = new ArrayList<>();
    List<String[]> candidates = new ArrayList<>();
    candidates.add(new String[] {"A", "B"});
    candidates.add(new String[] {"A", "F"});
    candidates.add(new String[] {"B", "F"});
    candidates.add(new String[] {"A", "AC"});
    candidates.add(new String[] {"AC", "B"});
    candidates.add(new String[] {"AN", "B"});
    candidates.add(new String[] {"AN", "A"});
    candidates.add(new String[] {"AN", "F"});
    candidates.add(new String[] {"A", "BT"});
    candidates.add(new String[] {"BT", "B"});
    candidates.add(new String[] {"BT", "F"});
    candidates.add(new String[] {"A", "B1"});
    candidates.add(new String[] {"B1", "F"});
    candidates.add(new String[] {"A", "BR"});
    candidates.add(new String[] {"A", "BRC"});
    candidates.add(new String[] {"BR", "B"});
    candidates.add(new String[] {"BR", "F"});
    candidates.add(new String[] {"BRC", "F"});
    for (String v : vs) {
      if (v.matches("A[0-9]")) {
        candidates.add(new String[] {"A", v});
        candidates.add(new String[] {v, "B"});
        candidates.add(new String[] {v, "F"});
      }
    }
    for (String[] p : candidates) {
      if (vs.contains(p[0]) && vs.contains(p[1])) {
        pairs.add(p);
      }
    }
    return pairs;
  }

  void write(Path dir) throws IOException {
    Files.writeString(dir.resolve("throughput.md"), markdown());
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("settings", settings.asMap());
    json.put("rounds", rounds.describe());
    Map<String, Object> summaries = new LinkedHashMap<>();
    for (String w : results.keySet()) {
      Map<String, Object> s = new LinkedHashMap<>();
      List<String> vs = rounds.variantsFor(w);
      for (String[] p : pairs(vs)) {
        double[] r = ratios(w, p[0], p[1]);
        double[] c = cpuRatios(w, p[0], p[1]);
        s.put(p[0] + "/" + p[1] + " by CPU time", ratioSummary(c));
        s.put(
            p[0] + "/" + p[1] + " by CPU time without JIT",
            ratioSummary(cpuRatiosWithoutJit(w, p[0], p[1])));
        s.put(p[0] + "/" + p[1], ratioSummary(r));
      }
      if (vs.contains("F")) {
        for (String den : OVERHEAD_DENOMINATORS) {
          if (vs.contains("A") && vs.contains(den)) {
            s.put(
                "(A-F)/(" + den + "-F) by CPU time without JIT",
                ratioSummary(overheadRatios(w, "A", den)));
            s.put(
                "sum(A-F)/sum(" + den + "-F) by CPU time without JIT", overheadOfSums(w, "A", den));
          }
        }
      }
      for (String v : vs) {
        s.put(v + " ingest seconds", ratioSummary(ingestSeconds(w, v)));
      }
      summaries.put(w, s);
    }
    json.put("ratios", summaries);
    json.put("runs", results);
    new ObjectMapper()
        .writerWithDefaultPrettyPrinter()
        .writeValue(dir.resolve("throughput.json").toFile(), json);
  }

  /** Median, min, max and the rounds of one ratio, for the JSON report. */
  private static Map<String, Object> ratioSummary(double[] rounds) {
    return Map.of(
        "median",
        median(rounds),
        "min",
        Arrays.stream(rounds).min().orElse(Double.NaN),
        "max",
        Arrays.stream(rounds).max().orElse(Double.NaN),
        "rounds",
        rounds);
  }
}
