package org.spatialingest.bench;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sizing.Units;

/**
 * The benchmark's knobs. Each is read from a {@code name=value} (or {@code --name=value}) argument,
 * else the system property {@code bench.name}, else the default below (the scenario scaled
 * down: C = 1 s, L = 12 s so L/C = 12, T = 128 MB, a live run of 60 s = 5 L).
 */
record BenchSettings(
    Duration checkpoint,
    Duration latency,
    String target,
    String memory,
    Duration duration,
    int rate,
    int parallelism,
    int partitions,
    int backlog,
    int polygonEvery,
    int polygonVertices,
    int vehicles,
    String area,
    double hotspot,
    long seed,
    String xmx,
    Duration phaseTimeout,
    String jit) {

  static final Map<String, String> DEFAULTS = new LinkedHashMap<>();

  static {
    DEFAULTS.put("checkpoint", "1s"); // C
    DEFAULTS.put("latency", "12s"); // L (our sink's sink.max-latency)
    DEFAULTS.put("target", "128MB"); // T (our sink's sink.target-file-size)
    DEFAULTS.put("memory", "128MB"); // M per writer (our sink's sink.memory-budget)
    DEFAULTS.put("duration", "60s"); // live phase: how long records are produced
    DEFAULTS.put("rate", "3000"); // live phase: offered records/s
    DEFAULTS.put("parallelism", "2"); // every operator, both sinks
    DEFAULTS.put("partitions", "2"); // Kafka partitions of each topic
    DEFAULTS.put("backlog", "150000"); // throughput phase: N records already in Kafka
    DEFAULTS.put("polygon-every", "100"); // 1 % polygon refreshes
    DEFAULTS.put("polygon-vertices", "2000");
    DEFAULTS.put("vehicles", "50");
    DEFAULTS.put("area", "europe"); // where vehicles start: europe, world
    DEFAULTS.put("hotspot", "0"); // share of the vehicles (so of the points) around one city
    DEFAULTS.put("seed", "42");
    DEFAULTS.put("xmx", "2g"); // heap of each child JVM (both sinks alike)
    DEFAULTS.put(
        "phase-timeout",
        "10m"); // bound on every wait of a phase (start, catch-up, drain, bounded job)
    // the child JVMs' JIT: tiered (the JVM's default, what a TaskManager runs) or c2 (no C1 tier:
    // fewer methods to compile, so the compiler may be done before the measured job)
    DEFAULTS.put("jit", "tiered");
  }

  static BenchSettings parse(String[] args) {
    Map<String, String> v = new LinkedHashMap<>();
    DEFAULTS.forEach((k, d) -> v.put(k, System.getProperty("bench." + k, d)));
    for (String arg : args) {
      if (arg.isBlank()) {
        continue;
      }
      String a = arg.startsWith("--") ? arg.substring(2) : arg;
      int eq = a.indexOf('=');
      String key = eq > 0 ? a.substring(0, eq) : null;
      if (key == null || !DEFAULTS.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown argument "
                + arg
                + "; known: "
                + String.join("=, ", DEFAULTS.keySet())
                + "=, jfr");
      }
      v.put(key, a.substring(eq + 1));
    }
    BenchSettings s =
        new BenchSettings(
            Units.parseDuration(v.get("checkpoint")),
            Units.parseDuration(v.get("latency")),
            v.get("target"),
            v.get("memory"),
            Units.parseDuration(v.get("duration")),
            Integer.parseInt(v.get("rate")),
            Integer.parseInt(v.get("parallelism")),
            Integer.parseInt(v.get("partitions")),
            Integer.parseInt(v.get("backlog")),
            Integer.parseInt(v.get("polygon-every")),
            Integer.parseInt(v.get("polygon-vertices")),
            Integer.parseInt(v.get("vehicles")),
            v.get("area"),
            Double.parseDouble(v.get("hotspot")),
            Long.parseLong(v.get("seed")),
            v.get("xmx"),
            Units.parseDuration(v.get("phase-timeout")),
            v.get("jit"));
    s.generatorArea();
    s.jitFlags();
    Units.parseBytes(s.target());
    Units.parseBytes(s.memory());
    return s;
  }

  /** The child JVMs' flags for {@link #jit}. */
  List<String> jitFlags() {
    return switch (jit) {
      case "tiered" -> List.of();
      case "c2" -> List.of("-XX:-TieredCompilation");
      default -> throw new IllegalArgumentException("jit must be tiered or c2, was " + jit);
    };
  }

  /** Where the generated vehicles start. */
  TelemetryGenerator.Area generatorArea() {
    TelemetryGenerator.Area a =
        switch (area) {
          case "europe" -> TelemetryGenerator.Area.EUROPE;
          case "world" -> TelemetryGenerator.Area.WORLD;
          default ->
              throw new IllegalArgumentException("area must be europe or world, was " + area);
        };
    if (hotspot < 0 || hotspot > 1) {
      throw new IllegalArgumentException("hotspot must be a share from 0 to 1, was " + hotspot);
    }
    return a.withHotSpot(hotspot);
  }

  /** The same knobs with another parallelism. */
  BenchSettings withParallelism(int p) {
    return new BenchSettings(
        checkpoint,
        latency,
        target,
        memory,
        duration,
        rate,
        p,
        partitions,
        backlog,
        polygonEvery,
        polygonVertices,
        vehicles,
        area,
        hotspot,
        seed,
        xmx,
        phaseTimeout,
        jit);
  }

  /** The same knobs with another hot-spot share. */
  BenchSettings withHotspot(double share) {
    return new BenchSettings(
        checkpoint,
        latency,
        target,
        memory,
        duration,
        rate,
        parallelism,
        partitions,
        backlog,
        polygonEvery,
        polygonVertices,
        vehicles,
        area,
        share,
        seed,
        xmx,
        phaseTimeout,
        jit);
  }

  long liveRecords() {
    return (long) rate * duration.toMillis() / 1000;
  }

  /** The same sizing keys for both sinks; B ignores the sink.* ones. */
  Map<String, String> jobKeys() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("checkpoint.interval", checkpoint.toMillis() + "ms");
    m.put("sink.close-policy", "bounded");
    m.put("sink.max-latency", latency.toMillis() + "ms");
    m.put("sink.target-file-size", target);
    m.put("sink.memory-budget", memory);
    return m;
  }

  /** The effective knobs as config strings, for the JSON report. */
  Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("checkpoint", Units.formatDuration(checkpoint));
    m.put("latency", Units.formatDuration(latency));
    m.put("target", target);
    m.put("memory", memory);
    m.put("duration", Units.formatDuration(duration));
    m.put("rate", Integer.toString(rate));
    m.put("parallelism", Integer.toString(parallelism));
    m.put("partitions", Integer.toString(partitions));
    m.put("backlog", Integer.toString(backlog));
    m.put("polygon-every", Integer.toString(polygonEvery));
    m.put("polygon-vertices", Integer.toString(polygonVertices));
    m.put("vehicles", Integer.toString(vehicles));
    m.put("area", area);
    m.put("hotspot", Double.toString(hotspot));
    m.put("seed", Long.toString(seed));
    m.put("xmx", xmx);
    m.put("phase-timeout", Units.formatDuration(phaseTimeout));
    return m;
  }

  /** A one-line description of the scenario, for the report. */
  String describe() {
    return String.format(
        "C = %s, L = %s (L/C = %.1f), T = %s, M = %s, live run %s at %,d rec/s offered "
            + "(%,d records), parallelism %d, %d Kafka partitions, backlog N = %,d, 1 in %d records a %,d-vertex polygon, "
            + "%d vehicles over %s%s, child JVM -Xmx%s",
        Units.formatDuration(checkpoint),
        Units.formatDuration(latency),
        (double) latency.toMillis() / checkpoint.toMillis(),
        target,
        memory,
        Units.formatDuration(duration),
        rate,
        liveRecords(),
        parallelism,
        partitions,
        backlog,
        polygonEvery,
        polygonVertices,
        vehicles,
        area,
        hotspot > 0 ? String.format(" (%.0f %% around one city)", hotspot * 100) : "",
        xmx);
  }
}
