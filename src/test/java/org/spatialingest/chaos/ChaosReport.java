package org.spatialingest.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The run's results as {@code results.md} (a table for people) and {@code results.json} (for
 * tools).
 */
record ChaosReport(
    ChaosSettings settings,
    List<ChaosRun.FaultRecord> faults,
    ChaosCheck.Result check,
    long wallMillis) {

  Map<FaultKind, List<Long>> recoveriesByKind() {
    Map<FaultKind, List<Long>> by = new EnumMap<>(FaultKind.class);
    for (ChaosRun.FaultRecord f : faults) {
      by.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(f.recoveryMillis());
    }
    by.values().forEach(list -> list.sort(Long::compare));
    return by;
  }

  static long p50(List<Long> sorted) {
    return sorted.get((sorted.size() - 1) / 2);
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "Chaos run: %,d records produced (%,d rows, %,d malformed), %d faults, "
                + "seed %d, wall time %s%n%n",
            check.produced(),
            check.expectedRows(),
            check.expectedRejects(),
            faults.size(),
            settings.seed(),
            minutes(wallMillis)));
    md.append("| fault | injected | recovery p50 | recovery max |\n|---|---:|---:|---:|\n");
    recoveriesByKind()
        .forEach(
            (kind, r) ->
                md.append(
                    String.format(
                        Locale.ROOT,
                        "| %s | %d | %.1f s | %.1f s |%n",
                        kind.name().toLowerCase(Locale.ROOT),
                        r.size(),
                        p50(r) / 1000.0,
                        r.get(r.size() - 1) / 1000.0)));
    md.append("\n| result | value |\n|---|---:|\n");
    summary().forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));
    if (!check.ok()) {
      md.append("\nFAILED\n");
      check.orphans().stream()
          .limit(10)
          .forEach(o -> md.append("- orphan ").append(o).append('\n'));
      check.incoherentSnapshots().stream()
          .limit(10)
          .forEach(o -> md.append("- ").append(o).append('\n'));
      check.freshnessExamples().forEach(o -> md.append("- ").append(o).append('\n'));
    }
    md.append("\nFaults in order:\n\n");
    for (ChaosRun.FaultRecord f : faults) {
      md.append(
          String.format(
              Locale.ROOT,
              "1. %s: recovered in %.1f s %s%n",
              f.kind().name().toLowerCase(Locale.ROOT),
              f.recoveryMillis() / 1000.0,
              f.note().isEmpty() ? "" : "(" + f.note() + ")"));
    }
    return md.toString();
  }

  private Map<String, Object> summary() {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("records produced (acknowledged by the broker)", check.produced());
    s.put("rows expected (accepted + other writer)", check.expectedRows() + check.externalRows());
    s.put("rows in the table", check.rows());
    s.put("lost", check.lost());
    s.put("duplicated", check.duplicated());
    s.put("rejects expected (malformed)", check.expectedRejects());
    s.put("rejects in the rejects table", check.rejects());
    s.put("rejects lost / duplicated", check.rejectsLost() + " / " + check.rejectsDuplicated());
    s.put("orphan files", check.orphans().size());
    s.put(
        "rows where the mid-run column disagrees with the record",
        check.newColumnProblems().size());
    s.put(
        "sink snapshots (incoherent)",
        check.sinkSnapshots() + " (" + check.incoherentSnapshots().size() + ")");
    s.put(
        "oldest row age at commit, max",
        String.format(Locale.ROOT, "%.1f s", check.maxRowAgeMillis() / 1000.0));
    s.put(
        "checkpoint trigger to commit, max (commits whose trigger time was not seen)",
        String.format(
            Locale.ROOT,
            "%.1f s (%d)",
            check.maxCommitDelayMillis() / 1000.0,
            check.commitsWithoutTrigger()));
    s.put("commits older than L + C + recovery", check.freshnessViolations());
    s.put("wall time", minutes(wallMillis));
    return s;
  }

  void write(Path dir) throws Exception {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.md"), markdown());
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("ok", check.ok());
    json.put("seed", settings.seed());
    json.put("wallMillis", wallMillis);
    Map<String, Object> kinds = new LinkedHashMap<>();
    recoveriesByKind()
        .forEach(
            (kind, r) ->
                kinds.put(
                    kind.name(),
                    Map.of(
                        "count",
                        r.size(),
                        "recoveryP50Millis",
                        p50(r),
                        "recoveryMaxMillis",
                        r.get(r.size() - 1))));
    json.put("faultsByKind", kinds);
    json.put(
        "faults",
        faults.stream()
            .map(
                f ->
                    Map.of(
                        "kind",
                        f.kind().name(),
                        "startedMillis",
                        f.startedMillis(),
                        "recoveryMillis",
                        f.recoveryMillis(),
                        "note",
                        f.note()))
            .toList());
    json.put("check", check);
    new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .writeValue(dir.resolve("results.json").toFile(), json);
  }

  private static String minutes(long millis) {
    return String.format(Locale.ROOT, "%d min %02d s", millis / 60_000, millis / 1000 % 60);
  }
}
