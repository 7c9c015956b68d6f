package org.spatialingest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ForkJoinPool;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import org.apache.flink.util.TimeUtils;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.JobConfig.TimePartitioning;

/**
 * A simulated day of commits through the real committer (issue #37 item 5): {@code commits} closing
 * checkpoints of {@link CommitPathBenchmark}'s W synthetic writers, one per simulated L, each
 * carrying the files of the time partition its simulated minute falls in (event time spread over
 * the day from {@link CommitPathBenchmark#FIRST_DAY} 00:00 UTC), into a real Hadoop catalog's
 * tables created as the job creates them. Quiet checkpoints between commits are left out: they
 * write no metadata.
 *
 * <p>Every {@code every} commits it prints what the table's metadata holds then: {@code
 * metadata.json}'s bytes and snapshots, the current snapshot's manifest list (entries, bytes) and
 * its manifests' bytes, the metadata directory's files and bytes by kind; and the committer's CPU
 * per commit over that window, the commits whose merging append replaced manifests apart (their
 * merge runs on Iceberg's worker pool, measured as that pool's threads' CPU during the commit).
 * With {@code expire=} (a duration) the snapshots are expired as the in-job maintenance would
 * ({@code TableMaintenanceTasks}: Iceberg's {@code ExpireSnapshots} with max-age, {@code
 * retain-last}, every {@code expire-every} commits), on the simulated clock: a snapshot is as old
 * as the simulated minutes since its commit. At the end: where {@code metadata.json}'s bytes are,
 * and the check that every file was committed once.
 *
 * <pre>
 * java -Xmx3g -cp ... org.spatialingest.bench.CommitPathBenchmark writers=64 commits=1440 \
 *   [every=60 interval=60 partitioning=day keys-per-writer=0 expire=24h retain-last=10 expire-every=100]
 * </pre>
 *
 * Defaults for the day: {@code partitions=1 ranges=1} (W files per commit, in the current
 * partition), {@code seconds=} the interval, {@code runs=1}, {@code sources=0} (K = W). {@code
 * keys-per-writer=n} has each writer report n of the K source partitions (0: all of them, as the
 * range exchange does; the summary holds K either way, the aggregator's work is W × n).
 */
final class SimulatedDay {
  private static final ThreadMXBean THREAD = (ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final ObjectMapper JSON = new ObjectMapper();

  private SimulatedDay() {}

  /** The day's clock, its partitioning, the positions each writer reports and the expiry. */
  record Day(
      int commits,
      int every,
      int intervalSeconds,
      TimePartitioning partitioning,
      int keysPerWriter,
      Duration expireMaxAge,
      int expireRetainLast,
      int expireEveryCommits) {

    /**
     * The partition value of commit {@code checkpoint}'s files, {@code back} partitions before the
     * one its simulated minute falls in, as Iceberg parses a partition path.
     */
    String partitionValue(long checkpoint, int back) {
      Instant t =
          CommitPathBenchmark.FIRST_DAY
              .atStartOfDay(ZoneOffset.UTC)
              .toInstant()
              .plusSeconds((checkpoint - 1) * intervalSeconds);
      return switch (partitioning) {
        case DAY -> LocalDate.ofInstant(t, ZoneOffset.UTC).minusDays(back).toString();
        case HOUR -> Long.toString(t.getEpochSecond() / 3600 - back); // hours since the epoch
      };
    }

    /** Commits older than max-age at commit {@code cp} on the simulated clock: up to this one. */
    long expiredUpTo(long cp) {
      return cp - expireMaxAge.toSeconds() / intervalSeconds - 1;
    }
  }

  /** One commit's cost (nanoseconds) and what its merging append did. */
  record Cost(
      long commit,
      long committerCpu,
      long workerPoolCpu,
      long aggregatorCpu,
      long icebergCommit,
      long manifestsReplaced,
      long manifestsCreated) {
    boolean merged() {
      return manifestsReplaced > 0;
    }
  }

  /** One expiry run: snapshots before and after, wall and this thread's CPU (nanoseconds). */
  record Expiry(long commit, int before, int after, long wall, long cpu) {}

  /** Files and bytes of one kind in the metadata directory. */
  record Kind(long files, long bytes) {}

  static void main(Map<String, String> a, Path dir) throws Exception {
    int commits = Integer.parseInt(a.get("commits"));
    int interval = Integer.parseInt(a.getOrDefault("interval", "60"));
    Day day =
        new Day(
            commits,
            Integer.parseInt(a.getOrDefault("every", "60")),
            interval,
            TimePartitioning.valueOf(
                a.getOrDefault("partitioning", "day").toUpperCase(Locale.ROOT)),
            Integer.parseInt(a.getOrDefault("keys-per-writer", "0")),
            a.containsKey("expire") ? TimeUtils.parseDuration(a.get("expire")) : null,
            Integer.parseInt(a.getOrDefault("retain-last", "10")),
            Integer.parseInt(a.getOrDefault("expire-every", "100")));
    for (String w : a.getOrDefault("writers", "64").split(",")) {
      var s =
          new CommitPathBenchmark.Settings(
              Integer.parseInt(w.trim()),
              commits,
              0,
              0,
              Integer.parseInt(a.getOrDefault("partitions", "1")),
              Integer.parseInt(a.getOrDefault("ranges", "1")),
              Integer.parseInt(a.getOrDefault("seconds", Integer.toString(interval))),
              Integer.parseInt(a.getOrDefault("runs", "1")),
              Integer.parseInt(a.getOrDefault("sources", "0")));
      double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
      long start = System.nanoTime();
      Path runDir = dir.resolve("day-w" + s.writers());
      run(s, day, runDir);
      System.out.printf(
          "[day] W=%d took %.1f s; load average %.1f before, %.1f after%n",
          s.writers(),
          (System.nanoTime() - start) / 1e9,
          loadBefore,
          ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      SinkBenchmark.deleteRecursively(runDir);
    }
  }

  /** What a day left: its commits' costs, its expiries, the table at the end. */
  record Result(
      List<Cost> costs,
      List<Expiry> expiries,
      long filesWritten,
      CommitPathBenchmark.Committed committed,
      long metadataJson) {}

  static Result run(CommitPathBenchmark.Settings s, Day day, Path dir) throws Exception {
    JobConfig config =
        CommitPathBenchmark.config(
            dir, Map.of("table.partitioning", day.partitioning().name().toLowerCase(Locale.ROOT)));
    SpatialIngestJob.ensureTables(config);
    Table table = CommitPathBenchmark.loadTable(config);
    var input = new CommitPathBenchmark.Input(s, table, day);
    String location = table.location();
    Path metadata =
        (location.contains(":") ? Path.of(URI.create(location)) : Path.of(location))
            .resolve("metadata");
    System.out.printf(
        "[day] W=%d: %d commits, one per simulated %d s, %,d files each (%d partition(s) x %d"
            + " range(s) per writer, partitioning %s), %,d Kafka partitions (%s per writer);"
            + " expiry: %s%n",
        s.writers(),
        day.commits(),
        day.intervalSeconds(),
        s.filesPerCheckpoint(),
        s.partitions(),
        s.ranges(),
        day.partitioning(),
        s.sourceCount(),
        day.keysPerWriter() > 0 ? Integer.toString(day.keysPerWriter()) : "all",
        day.expireMaxAge() == null
            ? "none"
            : "max-age "
                + day.expireMaxAge()
                + ", retain-last "
                + day.expireRetainLast()
                + ", every "
                + day.expireEveryCommits()
                + " commits");
    System.out.println(
        "[day] commit | sim. time | snapshots | metadata.json B | manifest list: entries / B |"
            + " current manifests B | metadata dir: files / MB (json n/MB, lists n/MB, manifests"
            + " n/MB, other n/MB) | committer CPU ms, non-merging: median / p95 (n) | merging:"
            + " n, committer CPU ms median / max, worker pool CPU ms median / max | Iceberg commit"
            + " ms median | expiry: runs, snapshots expired, wall ms / CPU ms");

    long[] committedAt = new long[day.commits() + 1];
    List<Cost> costs = new ArrayList<>();
    List<Expiry> expiries = new ArrayList<>();
    int expiriesReported = 0;
    long generationNanos = 0;
    ForkJoinPool generators = new ForkJoinPool(4);
    try (var operators = new CommitPathBenchmark.Operators(config, dir)) {
      int reported = 0;
      for (long cp = 1; cp <= day.commits(); cp++) {
        long generating = System.nanoTime();
        List<byte[]> reports = input.reports(generators, cp, true);
        generationNanos += System.nanoTime() - generating;
        CommitPathBenchmark.CommitTimes.REPORTS.clear();

        CommitPathBenchmark.Step st = operators.checkpoint(cp, reports);
        committedAt[(int) cp] = System.currentTimeMillis();
        long iceberg = 0;
        long replaced = 0;
        long created = 0;
        for (CommitReport r : CommitPathBenchmark.CommitTimes.REPORTS) {
          iceberg += r.commitMetrics().totalDuration().totalDuration().toNanos();
          replaced += count(r.commitMetrics().manifestsReplaced());
          created += count(r.commitMetrics().manifestsCreated());
        }
        costs.add(
            new Cost(
                cp, st.commCpu(), st.workerPoolCpu(), st.aggCpu(), iceberg, replaced, created));

        if (day.expireMaxAge() != null && cp % day.expireEveryCommits() == 0) {
          expiries.add(expire(table, day, committedAt, cp));
        }
        if (cp % day.every() == 0 || cp == day.commits()) {
          printRow(
              table,
              metadata,
              day,
              cp,
              costs.subList(reported, costs.size()),
              expiries.subList(expiriesReported, expiries.size()));
          reported = costs.size();
          expiriesReported = expiries.size();
        }
      }
    } finally {
      generators.shutdownNow();
    }

    printCosts(s, costs);
    printMetadataJson(s, table);
    CommitPathBenchmark.Committed committed = CommitPathBenchmark.committed(table, input);
    System.out.printf(
        "[day] W=%d generating the writers' reports (not measured) took %.1f s%n",
        s.writers(), generationNanos / 1e9);
    System.out.printf(
        "[day] W=%d committed %,d data files, %,d distinct of the %,d written%s; %d snapshots"
            + " in the table%n",
        s.writers(),
        committed.files(),
        committed.distinct(),
        input.written.size(),
        committed.files() == input.written.size() && committed.distinct() == input.written.size()
            ? ": each exactly once"
            : ": MISMATCH",
        committed.snapshots());
    return new Result(
        costs,
        expiries,
        input.written.size(),
        committed,
        CommitPathBenchmark.metadataJsonLength(table));
  }

  private static long count(CounterResult c) {
    return c == null ? 0 : c.value();
  }

  /**
   * Expires as {@code TableMaintenanceTasks} has Iceberg's Flink {@code ExpireSnapshots} do it
   * (older than max-age, never the last {@code retain-last}, the files no snapshot needs deleted),
   * with the simulated clock's cut-off: the real commit time of the newest commit older than
   * max-age.
   */
  private static Expiry expire(Table table, Day day, long[] committedAt, long cp) {
    table.refresh();
    int before = size(table.snapshots());
    long upTo = day.expiredUpTo(cp);
    long cpu0 = THREAD.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    table
        .expireSnapshots()
        .expireOlderThan(upTo >= 1 ? committedAt[(int) upTo] + 1 : 0)
        .retainLast(day.expireRetainLast())
        .commit();
    long wall = System.nanoTime() - t0;
    long cpu = THREAD.getCurrentThreadCpuTime() - cpu0;
    table.refresh();
    return new Expiry(cp, before, size(table.snapshots()), wall, cpu);
  }

  private static int size(Iterable<?> items) {
    int n = 0;
    for (Object ignored : items) {
      n++;
    }
    return n;
  }

  private static void printRow(
      Table table, Path metadata, Day day, long cp, List<Cost> window, List<Expiry> expiries)
      throws IOException {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    List<ManifestFile> manifests = current.allManifests(table.io());
    long manifestBytes = manifests.stream().mapToLong(ManifestFile::length).sum();
    long listBytes = table.io().newInputFile(current.manifestListLocation()).getLength();
    Map<String, Kind> kinds = new TreeMap<>();
    try (Stream<Path> files = Files.list(metadata)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        String kind =
            name.endsWith(".crc")
                ? "other"
                : name.endsWith(".metadata.json")
                    ? "json"
                    : name.startsWith("snap-")
                        ? "lists"
                        : name.endsWith(".avro") ? "manifests" : "other";
        kinds.merge(
            kind,
            new Kind(1, Files.size(f)),
            (x, y) -> new Kind(x.files() + 1, x.bytes() + y.bytes()));
      }
    }
    long dirFiles = kinds.values().stream().mapToLong(Kind::files).sum();
    long dirBytes = kinds.values().stream().mapToLong(Kind::bytes).sum();
    StringBuilder byKind = new StringBuilder();
    for (String k : List.of("json", "lists", "manifests", "other")) {
      Kind v = kinds.getOrDefault(k, new Kind(0, 0));
      byKind
          .append(byKind.isEmpty() ? "" : ", ")
          .append(String.format("%d/%.1f", v.files(), v.bytes() / 1e6));
    }
    List<Cost> plain = window.stream().filter(c -> !c.merged()).toList();
    List<Cost> merging = window.stream().filter(Cost::merged).toList();
    long simulatedMinutes = cp * day.intervalSeconds() / 60;
    System.out.printf(
        "[day] %d | %02d:%02d | %d | %,d | %d / %,d | %,d | %,d / %.1f (%s) | %.1f / %.1f (%d) |"
            + " %d, %.1f / %.1f, %.1f / %.1f | %.1f | %d, %d, %.0f / %.0f%n",
        cp,
        simulatedMinutes / 60,
        simulatedMinutes % 60,
        size(table.snapshots()),
        CommitPathBenchmark.metadataJsonLength(table),
        manifests.size(),
        listBytes,
        manifestBytes,
        dirFiles,
        dirBytes / 1e6,
        byKind,
        ms(plain, Cost::committerCpu, 50),
        ms(plain, Cost::committerCpu, 95),
        plain.size(),
        merging.size(),
        ms(merging, Cost::committerCpu, 50),
        ms(merging, Cost::committerCpu, 100),
        ms(merging, Cost::workerPoolCpu, 50),
        ms(merging, Cost::workerPoolCpu, 100),
        ms(window, Cost::icebergCommit, 50),
        expiries.size(),
        expiries.stream().mapToLong(e -> e.before() - e.after()).sum(),
        expiries.stream().mapToLong(Expiry::wall).sum() / 1e6,
        expiries.stream().mapToLong(Expiry::cpu).sum() / 1e6);
  }

  private static double ms(List<Cost> costs, ToLongFunction<Cost> f, int percentile) {
    List<Long> v = costs.stream().map(f::applyAsLong).sorted().toList();
    return Percentiles.of(v, percentile) / 1e6;
  }

  private static void printCosts(CommitPathBenchmark.Settings s, List<Cost> costs) {
    // the first hour warms the JIT: the whole day's figures leave it out
    List<Cost> warm = costs.stream().filter(c -> c.commit() > 60).toList();
    List<Cost> plain = warm.stream().filter(c -> !c.merged()).toList();
    List<Cost> merging = warm.stream().filter(Cost::merged).toList();
    System.out.printf(
        "[day] W=%d per commit after the first 60 (median / p95 / max, ms): non-merging (%d):"
            + " committer CPU %.1f / %.1f / %.1f, worker pool CPU %.1f / %.1f / %.1f, Iceberg commit"
            + " %.1f / %.1f / %.1f, aggregator CPU %.1f / %.1f / %.1f%n",
        s.writers(),
        plain.size(),
        ms(plain, Cost::committerCpu, 50),
        ms(plain, Cost::committerCpu, 95),
        ms(plain, Cost::committerCpu, 100),
        ms(plain, Cost::workerPoolCpu, 50),
        ms(plain, Cost::workerPoolCpu, 95),
        ms(plain, Cost::workerPoolCpu, 100),
        ms(plain, Cost::icebergCommit, 50),
        ms(plain, Cost::icebergCommit, 95),
        ms(plain, Cost::icebergCommit, 100),
        ms(plain, Cost::aggregatorCpu, 50),
        ms(plain, Cost::aggregatorCpu, 95),
        ms(plain, Cost::aggregatorCpu, 100));
    System.out.printf(
        "[day] W=%d merging (%d, replacing %,d manifests with %,d): committer CPU %.1f / %.1f /"
            + " %.1f, worker pool CPU %.1f / %.1f / %.1f, Iceberg commit %.1f / %.1f / %.1f%n",
        s.writers(),
        merging.size(),
        merging.stream().mapToLong(Cost::manifestsReplaced).sum(),
        merging.stream().mapToLong(Cost::manifestsCreated).sum(),
        ms(merging, Cost::committerCpu, 50),
        ms(merging, Cost::committerCpu, 95),
        ms(merging, Cost::committerCpu, 100),
        ms(merging, Cost::workerPoolCpu, 50),
        ms(merging, Cost::workerPoolCpu, 95),
        ms(merging, Cost::workerPoolCpu, 100),
        ms(merging, Cost::icebergCommit, 50),
        ms(merging, Cost::icebergCommit, 95),
        ms(merging, Cost::icebergCommit, 100));
    System.out.printf(
        "[day] W=%d commits that merged: %s%n",
        s.writers(),
        costs.stream()
            .filter(Cost::merged)
            .map(c -> c.commit() + " (" + c.manifestsReplaced() + "->" + c.manifestsCreated() + ")")
            .toList());
  }

  /**
   * Where {@code metadata.json}'s bytes are: each top-level field's compact JSON, and over all
   * snapshots the bytes of each summary key ({@code "key":"value",}).
   */
  private static void printMetadataJson(CommitPathBenchmark.Settings s, Table table)
      throws IOException {
    table.refresh();
    String location =
        ((org.apache.iceberg.HasTableOperations) table)
            .operations()
            .current()
            .metadataFileLocation();
    byte[] bytes;
    try (var in = table.io().newInputFile(location).newStream()) {
      bytes = in.readAllBytes();
    }
    JsonNode root = JSON.readTree(bytes);
    System.out.printf(
        "[day] W=%d metadata.json %,d bytes; by top-level field (compact JSON):%n",
        s.writers(), bytes.length);
    List<Map.Entry<String, Long>> fields = new ArrayList<>();
    root.fields()
        .forEachRemaining(
            e -> fields.add(Map.entry(e.getKey(), (long) e.getValue().toString().length())));
    fields.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    for (var e : fields) {
      System.out.printf("[day]   %-28s %,12d%n", e.getKey(), e.getValue());
    }
    Map<String, Long> byKey = new TreeMap<>();
    long summaries = 0;
    int snapshots = 0;
    for (JsonNode snapshot : root.path("snapshots")) {
      snapshots++;
      JsonNode summary = snapshot.path("summary");
      summaries += summary.toString().length();
      summary
          .fields()
          .forEachRemaining(
              e ->
                  byKey.merge(
                      e.getKey(),
                      (long) e.getKey().length() + e.getValue().asText().length() + 6,
                      Long::sum));
    }
    System.out.printf(
        "[day] W=%d %d snapshots: summaries %,d bytes (%,d per snapshot); by summary key, over all"
            + " snapshots:%n",
        s.writers(), snapshots, summaries, snapshots == 0 ? 0 : summaries / snapshots);
    byKey.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
        .forEach(e -> System.out.printf("[day]   %-44s %,12d%n", e.getKey(), e.getValue()));
  }
}
