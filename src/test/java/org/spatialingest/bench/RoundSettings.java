package org.spatialingest.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
 *       Iceberg's {@code IcebergSink}, BT = the same rolling its files at T, B1 = the same on a
 *       table with {@code parquet.enable.dictionary=false}, F = the floor (a discarding sink), A0,
 *       A1, ... = our sink from other builds' main classes ({@code baseline=<A0's
 *       target/classes>,<A1's>,...}, for before/after of changes in one run);
 *   <li>{@code points-variants=}: the variants of the points workload's rounds, if not {@code
 *       variants};
 *   <li>{@code points-backlog=600000}: the points workload's N (the mix's is {@code backlog});
 *   <li>{@code warmup=1}: jobs each throughput child runs to the end before the measured one, on
 *       the same backlog with its own table and consumer group, so that the measured job runs on
 *       compiled code: cold, the JIT compiler threads were a third of a 1M-point run's CPU (perf),
 *       and any cost the sinks share dilutes their ratio; 0 measures cold JVMs;
 *   <li>{@code warmup-share=1}: the share of the backlog's records a warm-up job reads (the first
 *       ones, from a topic of their own): long measured jobs need a short warm-up only; {@code
 *       points-warmup-share=}: the same for the points workload, if not {@code warmup-share};
 *   <li>{@code live-variants=A,B}: the variants of the live phase, and {@code live-workload=mix}
 *       its input ({@code points} or {@code mix}, as above); {@code live-rounds=1}: how many times
 *       each runs, the order rotated by one per round as in the throughput phase;
 *   <li>{@code query-ready-timeout=3m}: how long a compacting variant (BRC) may take after its last
 *       commit to make its table query-ready ({@link QueryReady}); not getting there is reported,
 *       and so is a compaction that stalls first ({@link CompactionProgress}: three rewrites that
 *       left neither fewer nor larger files end the wait); a warm-up waits for one rewrite only;
 *   <li>{@code suite=query-ready} or {@code suite=production}: a preset of the knobs above and of
 *       {@link BenchSettings}' (see {@link #SUITES}); arguments given with it override its values;
 *   <li>{@code jfr}: record every throughput run with Java Flight Recorder ({@code profile});
 *   <li>{@code no-queries}: no query set after the throughput runs (their query fields are null):
 *       for measuring CPU ratios only, where reading a round's tables back takes minutes.
 * </ul>
 *
 * <p>Variants BR (IcebergSink with its range shuffle on the table's hilbert sort order) and BRC (BR
 * plus Iceberg's Flink compaction in the job) are described in {@link BenchChild}.
 *
 * <p>Everything else goes on to {@link BenchSettings#parse}.
 */
record RoundSettings(
    boolean live,
    int liveRounds,
    List<String> liveVariants,
    String liveWorkload,
    java.time.Duration queryReadyTimeout,
    boolean throughput,
    int rounds,
    List<String> workloads,
    List<String> variants,
    List<String> pointsVariants,
    List<Path> baselines,
    int pointsBacklog,
    int warmups,
    double warmupShare,
    double pointsWarmupShare,
    boolean jfr,
    boolean queries,
    String[] rest) {

  static final List<String> KNOWN_VARIANTS =
      List.of(
          "A", "AN", "AC", "B", "BT", "B1", "BR", "BRC", "F", "A0", "A1", "A2", "A3", "A4", "A5",
          "A6", "A7", "A8", "A9");
  static final List<String> KNOWN_WORKLOADS = List.of("points", "mix");

  /**
   * This class's knobs and their defaults (a system property {@code bench.<name>} overrides one).
   */
  private static final Map<String, String> DEFAULTS =
      Map.ofEntries(
          Map.entry("phases", "live,throughput"),
          Map.entry("rounds", "3"),
          Map.entry("workloads", "points,mix"),
          Map.entry("variants", "A,B,F"),
          Map.entry("points-variants", ""),
          Map.entry("baseline", ""),
          Map.entry("points-backlog", "600000"),
          Map.entry("warmup", "1"),
          Map.entry("warmup-share", "1"),
          Map.entry("points-warmup-share", ""),
          Map.entry("live-rounds", "1"),
          Map.entry("live-variants", "A,B"),
          Map.entry("live-workload", "mix"),
          Map.entry("query-ready-timeout", "3m"));

  /**
   * Presets: {@code suite=<name>} stands for these arguments (given first, so any argument after
   * them wins). {@code query-ready} (issues #24 and #36, ≤ 45 min on 2 cores as the goal): 3 live
   * rounds of A and BR on points, then 5 interleaved throughput rounds of A, B, BR and F on points
   * and of A, B, BR, BRC and F on the mix. Sized so that each sink's measured job reads for about
   * 20 s or more on a quiet 2-core machine (2026-12-03, warmed up: IcebergSink ~150,000 points/s,
   * ours ~105,000, the mix ~9,000 rows/s), so that a job's start and end are noise in its ratios;
   * the floor F reads the same N faster. A warm-up job reads the whole points backlog (with 10 %
   * the JIT still compiled ~350 methods a second in the measured job, and two runs' CPU ratios on
   * points moved by 7–27 %; with the whole, two runs agreed within 10 %, benchmarks.md 2026-12-04)
   * and the first 10 % of the mix's (where the transform's cost dominates each variant's). T = 1
   * MB, so that the files Iceberg's sink closes every C = 1 s in the live phase (~0.3 MB) do not
   * reach T/2; the live rate 10,000 rec/s is what the job keeps up with on a busy machine. BRC runs
   * on the mix only: on points at this T Iceberg's compaction never made its table query-ready (it
   * stalls, every run since 2026-12-01), live or backlog, and its waits were ~45 % of a points
   * round; on the mix it waits at most 30 s for query-ready after its ingest (it got there within
   * ~7 s on 2026-12-02), and its warm-up as long for a first rewrite.
   *
   * <p>{@code ingest} (issue #58): the sink's ingest cost as benchmarks.md found it repeats, points
   * only: 5 interleaved throughput rounds of A, B and F over 3,000,000 points at T = 1 MB, each
   * child warmed up by a job as long as the measured one, no queries; ~9 min on a quiet 2-core
   * machine. Its figures are ours/B by CPU without JIT and Σ(A − F)/Σ(B − F) ({@code goals.json}).
   *
   * <p>{@code production} (issue #36 item 5, not in CI): the scenario at production's shape, as a
   * backfill: 5,000,000 points whose event times span 24.4 h (one every 1/57 s), read from a
   * backlog by ours, IcebergSink, IcebergSink with its range shuffle, and the floor, once each
   * (warm-up on the first 10 %), with T = 32 MB, L = 60 s, C = 10 s and the table's default daily
   * partitions; then the query set on each table. It reports CPU per million rows, files per
   * partition, bbox and time-range bytes read and the tables' metadata after the run.
   */
  static final Map<String, List<String>> SUITES =
      new TreeMap<>(
          Map.of(
              "ingest",
              List.of(
                  "phases=throughput",
                  "rounds=5",
                  "workloads=points",
                  "variants=A,B,F",
                  "points-backlog=3000000",
                  "target=1MB",
                  "points-warmup-share=1",
                  "no-queries"),
              "production",
              List.of(
                  "phases=throughput",
                  "rounds=1",
                  "workloads=points",
                  "variants=A,B,BR,F",
                  "points-backlog=5000000",
                  "rate=57",
                  "warmup-share=0.1",
                  "target=32MB",
                  "latency=60s",
                  "checkpoint=10s"),
              "query-ready",
              List.of(
                  "phases=live,throughput",
                  "live-rounds=3",
                  "live-variants=A,BR",
                  "live-workload=points",
                  "rounds=5",
                  "workloads=points,mix",
                  "variants=A,B,BR,BRC,F",
                  "points-variants=A,B,BR,F",
                  "points-backlog=3000000",
                  "backlog=200000",
                  "warmup-share=0.1",
                  "points-warmup-share=1",
                  "target=1MB",
                  "rate=10000",
                  "duration=20s",
                  "query-ready-timeout=30s")));

  static RoundSettings parse(String[] args) {
    Map<String, String> knobs = new HashMap<>();
    DEFAULTS.forEach((k, d) -> knobs.put(k, System.getProperty("bench." + k, d)));
    boolean jfr = false;
    boolean queries = true;
    List<String> rest = new ArrayList<>();
    for (String arg : expandSuites(args)) {
      String a = arg.startsWith("--") ? arg.substring(2) : arg;
      int eq = a.indexOf('=');
      String key = eq > 0 ? a.substring(0, eq) : a;
      if (a.equals("jfr")) {
        jfr = true;
      } else if (a.equals("no-queries")) {
        queries = false;
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
    List<String> pv = list(knobs.get("points-variants"));
    if (!KNOWN_VARIANTS.containsAll(pv)) {
      throw new IllegalArgumentException(
          "points-variants must be of " + KNOWN_VARIANTS + ": " + pv);
    }
    pv = pv.isEmpty() ? v : pv;
    List<Path> base = list(baseline).stream().map(b -> Path.of(b).toAbsolutePath()).toList();
    for (String variant : Stream.concat(v.stream(), pv.stream()).toList()) {
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
    List<String> lv = list(knobs.get("live-variants"));
    if (lv.isEmpty() || !KNOWN_VARIANTS.containsAll(lv)) {
      throw new IllegalArgumentException("live-variants must be of " + KNOWN_VARIANTS + ": " + lv);
    }
    String liveWorkload = knobs.get("live-workload");
    if (!KNOWN_WORKLOADS.contains(liveWorkload)) {
      throw new IllegalArgumentException(
          "live-workload must be one of " + KNOWN_WORKLOADS + ": " + liveWorkload);
    }
    int warmups = Integer.parseInt(knobs.get("warmup"));
    if (warmups < 0) {
      throw new IllegalArgumentException("warmup must be 0 or more: " + warmups);
    }
    int n = Integer.parseInt(rounds);
    if (n < 1) {
      throw new IllegalArgumentException("rounds must be at least 1: " + rounds);
    }
    int liveRounds = Integer.parseInt(knobs.get("live-rounds"));
    if (liveRounds < 1) {
      throw new IllegalArgumentException("live-rounds must be at least 1: " + liveRounds);
    }
    double warmupShare = share("warmup-share", knobs.get("warmup-share"));
    double pointsWarmupShare =
        share(
            "points-warmup-share",
            knobs.get("points-warmup-share").isEmpty()
                ? knobs.get("warmup-share")
                : knobs.get("points-warmup-share"));
    if (p.contains("live")
        && p.contains("throughput")
        && lv.contains("A")
        && lv.contains("B")
        && !(w.contains("mix") && v.contains("A") && v.contains("B"))) {
      throw new IllegalArgumentException(
          "the live phase's report needs the mix workload's A and B throughput runs");
    }
    return new RoundSettings(
        p.contains("live"),
        liveRounds,
        lv,
        liveWorkload,
        org.spatialingest.sizing.Units.parseDuration(knobs.get("query-ready-timeout")),
        p.contains("throughput"),
        n,
        w,
        v,
        pv,
        base,
        Integer.parseInt(pointsBacklog),
        warmups,
        warmupShare,
        pointsWarmupShare,
        jfr,
        queries,
        rest.toArray(String[]::new));
  }

  private static double share(String key, String value) {
    double share = Double.parseDouble(value);
    if (!(share > 0 && share <= 1)) {
      throw new IllegalArgumentException(
          key + " must be in (0, 1] (of the backlog's records): " + value);
    }
    return share;
  }

  /** The arguments with each {@code suite=<name>} replaced by its preset's, placed first. */
  static List<String> expandSuites(String[] args) {
    List<String> preset = new ArrayList<>();
    List<String> given = new ArrayList<>();
    for (String arg : args) {
      String a = arg.startsWith("--") ? arg.substring(2) : arg;
      if (a.startsWith("suite=")) {
        List<String> suite = SUITES.get(a.substring("suite=".length()));
        if (suite == null) {
          throw new IllegalArgumentException(
              "suite must be one of " + SUITES.keySet() + ": " + a.substring("suite=".length()));
        }
        preset.addAll(suite);
      } else {
        given.add(arg);
      }
    }
    preset.addAll(given);
    return preset;
  }

  /** Whether the live phase's side-by-side report (ours vs IcebergSink) can be made. */
  boolean liveReport() {
    return live && liveVariants.contains("A") && liveVariants.contains("B");
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

  /** The share of {@code workload}'s backlog a warm-up job reads. */
  double warmupShareFor(String workload) {
    return workload.equals("points") ? pointsWarmupShare : warmupShare;
  }

  /** The variants of {@code workload}'s throughput rounds. */
  List<String> variantsFor(String workload) {
    return workload.equals("points") ? pointsVariants : variants;
  }

  /** The main classes variant {@code v} runs, null for this build's. */
  Path classes(String v) {
    return v.matches("A[0-9]") ? baselines.get(v.charAt(1) - '0') : null;
  }

  String describe() {
    return String.format(
        "phases %s, %d interleaved round(s) of %s per workload %s%s (order rotated per round), "
            + "%d warm-up job(s) per throughput child on %.0f %% of the backlog%s%s%s",
        (live
                ? "live ("
                    + liveRounds
                    + " round(s) of "
                    + liveVariants
                    + " on "
                    + liveWorkload
                    + ") "
                : "")
            + (throughput ? "throughput" : ""),
        rounds,
        variants,
        workloads,
        pointsVariants.equals(variants) ? "" : " (points: " + pointsVariants + ")",
        warmups,
        warmupShare * 100,
        pointsWarmupShare == warmupShare
            ? ""
            : String.format(" (points: %.0f %%)", pointsWarmupShare * 100),
        baselines.isEmpty() ? "" : ", A0, A1, ... from " + baselines,
        jfr ? ", JFR on every throughput run" : "");
  }
}
