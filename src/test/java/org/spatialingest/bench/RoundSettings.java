package org.spatialingest.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The sink benchmark's own knobs next to {@link BenchSettings}: which phases run, and the
 * throughput phase's interleaved rounds. Arguments ({@code name=value}, or {@code --name=value}):
 *
 * <ul>
 *   <li>{@code phases=live,throughput} (default both);
 *   <li>{@code rounds=3}: throughput rounds per workload, each running every variant once, the
 *       order rotated by one per round;
 *   <li>{@code workloads=points,mix}: {@code points} = no polygons ({@code polygon-every=0}),
 *       {@code mix} = the {@code polygon-every} / {@code polygon-vertices} knobs (default 1 %
 *       2,000-vertex polygons);
 *   <li>{@code variants=A,B,F}: A = our sink, AN = ours with {@code sink.distribution=none} (no
 *       exchange: each writer chained to its transform), AC = ours without object reuse, B =
 *       Iceberg's {@code IcebergSink}, B1 = the same on a table with {@code
 *       parquet.enable.dictionary=false}, F = the floor (a discarding sink), A0, A1, ... = our sink
 *       from other builds' main classes ({@code baseline=<A0's target/classes>,<A1's>,...}, for
 *       before/after of changes in one run);
 *   <li>{@code points-backlog=600000}: the points workload's N (the mix's is {@code backlog});
 *   <li>{@code warmup=1}: jobs each throughput child runs to the end before the measured one, on
 *       the same backlog with its own table and consumer group, so that the measured job runs on
 *       compiled code: cold, the JIT compiler threads were a third of a 1M-point run's CPU (perf),
 *       and any cost the sinks share dilutes their ratio; 0 measures cold JVMs;
 *   <li>{@code jfr}: record every throughput run with Java Flight Recorder ({@code profile}).
 * </ul>
 *
 * Everything else goes on to {@link BenchSettings#parse}.
 */
record RoundSettings(
    boolean live,
    boolean throughput,
    int rounds,
    List<String> workloads,
    List<String> variants,
    List<Path> baselines,
    int pointsBacklog,
    int warmups,
    boolean jfr,
    String[] rest) {

  static final List<String> KNOWN_VARIANTS =
      List.of(
          "A", "AN", "AC", "B", "B1", "F", "A0", "A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8",
          "A9");
  static final List<String> KNOWN_WORKLOADS = List.of("points", "mix");

  /**
   * This class's knobs and their defaults (a system property {@code bench.<name>} overrides one).
   */
  private static final Map<String, String> DEFAULTS =
      Map.of(
          "phases", "live,throughput",
          "rounds", "3",
          "workloads", "points,mix",
          "variants", "A,B,F",
          "baseline", "",
          "points-backlog", "600000",
          "warmup", "1");

  static RoundSettings parse(String[] args) {
    Map<String, String> knobs = new HashMap<>();
    DEFAULTS.forEach((k, d) -> knobs.put(k, System.getProperty("bench." + k, d)));
    boolean jfr = false;
    List<String> rest = new ArrayList<>();
    for (String arg : args) {
      String a = arg.startsWith("--") ? arg.substring(2) : arg;
      int eq = a.indexOf('=');
      String key = eq > 0 ? a.substring(0, eq) : a;
      if (a.equals("jfr")) {
        jfr = true;
      } else if (eq > 0 && DEFAULTS.containsKey(key)) {
        knobs.put(key, a.substring(eq + 1));
      } else {
        rest.add(arg); // BenchSettings' knobs
      }
    }
    String phases = knobs.get("phases");
    String rounds = knobs.get("rounds");
    String workloads = knobs.get("workloads");
    String variants = knobs.get("variants");
    String baseline = knobs.get("baseline");
    String pointsBacklog = knobs.get("points-backlog");
    List<String> p = list(phases);
    for (String phase : p) {
      if (!phase.equals("live") && !phase.equals("throughput")) {
        throw new IllegalArgumentException("phases must be live and/or throughput: " + phases);
      }
    }
    List<String> w = list(workloads);
    if (w.isEmpty() || !KNOWN_WORKLOADS.containsAll(w)) {
      throw new IllegalArgumentException("workloads must be of " + KNOWN_WORKLOADS + ": " + w);
    }
    List<String> v = list(variants);
    if (v.isEmpty() || !KNOWN_VARIANTS.containsAll(v)) {
      throw new IllegalArgumentException("variants must be of " + KNOWN_VARIANTS + ": " + v);
    }
    List<Path> base = list(baseline).stream().map(b -> Path.of(b).toAbsolutePath()).toList();
    for (String variant : v) {
      if (variant.matches("A[0-9]")) {
        int i = variant.charAt(1) - '0';
        if (i >= base.size() || !Files.isDirectory(base.get(i))) {
          throw new IllegalArgumentException(
              "variant "
                  + variant
                  + " needs a directory as entry "
                  + i
                  + " of baseline=<build's target/classes>,...; was '"
                  + baseline
                  + "'");
        }
      }
    }
    int warmups = Integer.parseInt(knobs.get("warmup"));
    if (warmups < 0) {
      throw new IllegalArgumentException("warmup must be 0 or more: " + warmups);
    }
    int n = Integer.parseInt(rounds);
    if (n < 1) {
      throw new IllegalArgumentException("rounds must be at least 1: " + rounds);
    }
    if (p.contains("live")
        && p.contains("throughput")
        && !(w.contains("mix") && v.contains("A") && v.contains("B"))) {
      throw new IllegalArgumentException(
          "the live phase's report needs the mix workload's A and B throughput runs");
    }
    return new RoundSettings(
        p.contains("live"),
        p.contains("throughput"),
        n,
        w,
        v,
        base,
        Integer.parseInt(pointsBacklog),
        warmups,
        jfr,
        rest.toArray(String[]::new));
  }

  private static List<String> list(String csv) {
    return Stream.of(csv.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
  }

  /**
   * The knobs of one workload: {@code points} has no polygons and its own backlog ({@code
   * points-backlog}, default 600,000: points are read ~4x as fast as the mix).
   */
  BenchSettings forWorkload(BenchSettings base, String workload) {
    if (workload.equals("mix")) {
      return base;
    }
    String[] args =
        base.asMap().entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .map(a -> a.startsWith("polygon-every=") ? "polygon-every=0" : a)
            .map(a -> a.startsWith("backlog=") ? "backlog=" + pointsBacklog : a)
            .toArray(String[]::new);
    return BenchSettings.parse(args);
  }

  /** The main classes variant {@code v} runs, null for this build's. */
  Path classes(String v) {
    return v.matches("A[0-9]") ? baselines.get(v.charAt(1) - '0') : null;
  }

  String describe() {
    return String.format(
        "phases %s, %d interleaved round(s) of %s per workload %s (order rotated per round), "
            + "%d warm-up job(s) per throughput child%s%s",
        (live ? "live " : "") + (throughput ? "throughput" : ""),
        rounds,
        variants,
        workloads,
        warmups,
        baselines.isEmpty() ? "" : ", A0, A1, ... from " + baselines,
        jfr ? ", JFR on every throughput run" : "");
  }
}
