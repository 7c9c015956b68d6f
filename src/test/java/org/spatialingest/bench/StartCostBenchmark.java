package org.spatialingest.bench;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.ResumeFilter;
import org.spatialingest.table.Catalogs;

/**
 * What a start without state costs over a file backfill that is already committed (issue 59 item
 * 3): {@code files} small ndjson files of clustered points ({@link BackfillBenchmark#backfill}), a
 * bounded run of the whole job that commits them all, then a second start without state over the
 * same files into the same table, which commits nothing. Per round a new warehouse; both runs
 * measured in the same JVM, side by side: wall time (of which: building the job, where the start
 * check runs, and executing it), the process's CPU time, rows in the table after each run and the
 * records the resume filter dropped; the ratio re-run / committing run. A warm-up round (fewer
 * files) first, not reported.
 *
 * <pre>
 * mvn -B -o -Pbench verify -Dbench.class=StartCostBenchmark -Dbench.args="files=10000 rounds=2"
 * </pre>
 *
 * Arguments: {@code files=} (10000), {@code lines=} lines per file (20), {@code rounds=} (2),
 * {@code warmup=} files of the warm-up round (500; 0: none), {@code close-timeout=} Flink's {@code
 * source.reader.close.timeout} in ms (empty: Flink's default, 30 s); writes {@code
 * target/bench/start-cost.md}.
 */
public final class StartCostBenchmark {
  private StartCostBenchmark() {}

  public static void main(String[] args) {
    BenchMain.run(StartCostBenchmark::run, args);
  }

  /** One run of the job: its walls (build = where the start check runs), CPU, rows, skipped. */
  private record Run(double buildS, double wallS, double cpuS, long rows, long skipped) {}

  private static void run(String[] args) throws Exception {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("files", "10000");
    a.put("lines", "20");
    a.put("rounds", "2");
    a.put("warmup", "500");
    a.put("close-timeout", "");
    for (String arg : args) {
      int eq = arg.indexOf('=');
      a.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    int files = Integer.parseInt(a.get("files"));
    int lines = Integer.parseInt(a.get("lines"));
    int rounds = Integer.parseInt(a.get("rounds"));
    int warmup = Integer.parseInt(a.get("warmup"));
    Path dir = Path.of("target/bench/start-cost").toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    Path input = write(dir.resolve("input"), files, lines);
    if (warmup > 0) {
      Path warm = write(dir.resolve("input-warm-up"), warmup, lines);
      round(dir.resolve("warm-up"), warm, "warm-up", a.get("close-timeout"));
    }
    List<Run[]> results = new ArrayList<>();
    for (int r = 1; r <= rounds; r++) {
      results.add(round(dir.resolve("round-" + r), input, "round " + r, a.get("close-timeout")));
    }
    StringBuilder md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "%,d files of %d lines (%,d rows), %d rounds, each into a new table%n%n",
            files,
            lines,
            (long) files * lines,
            rounds));
    md.append(
        "| round | committing run: wall s (build s) | CPU s | re-run: wall s (build s) | CPU s | re-run rows"
            + " committed | re-run records dropped by the resume filter | wall ratio | CPU ratio |\n");
    md.append("|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < results.size(); r++) {
      Run c = results.get(r)[0];
      Run s = results.get(r)[1];
      md.append(
          String.format(
              Locale.ROOT,
              "| %d | %.1f (%.1f) | %.1f | %.1f (%.1f) | %.1f | %d | %d | %.2f× | %.2f× |%n",
              r + 1,
              c.wallS(),
              c.buildS(),
              c.cpuS(),
              s.wallS(),
              s.buildS(),
              s.cpuS(),
              s.rows() - c.rows(),
              s.skipped(),
              s.wallS() / c.wallS(),
              s.cpuS() / c.cpuS()));
    }
    Files.writeString(dir.getParent().resolve("start-cost.md"), md.toString());
    System.out.println();
    System.out.println(md);
  }

  /** {@code files} files of {@code lines} lines each, cut in order from one backfill. */
  private static Path write(Path in, int files, int lines) throws Exception {
    Files.createDirectories(in);
    List<String> all = BackfillBenchmark.backfill(files * lines, 30);
    for (int f = 0; f < files; f++) {
      int from = Math.min(all.size(), f * lines);
      int to = Math.min(all.size(), from + lines);
      Path file = in.resolve(String.format(Locale.ROOT, "part-%02d/%05d.ndjson", f % 100, f));
      Files.createDirectories(file.getParent());
      Files.write(file, all.subList(from, to), StandardCharsets.UTF_8);
    }
    return in;
  }

  /** The committing run, then the start without state over the same files and table. */
  private static Run[] round(Path runDir, Path input, String name, String closeTimeout)
      throws Exception {
    Run commit = once(runDir, input, "commit", closeTimeout);
    Run again = once(runDir, input, "re-run", closeTimeout);
    System.out.printf(
        Locale.ROOT,
        "[bench] %s: committing run wall %.1f s (build %.1f s), CPU %.1f s, %d rows; re-run wall %.1f s "
            + "(build %.1f s), CPU %.1f s, %d rows, %d dropped by the resume filter; wall %.2f×, CPU %.2f×%n",
        name,
        commit.wallS(),
        commit.buildS(),
        commit.cpuS(),
        commit.rows(),
        again.wallS(),
        again.buildS(),
        again.cpuS(),
        again.rows(),
        again.skipped(),
        again.wallS() / commit.wallS(),
        again.cpuS() / commit.cpuS());
    return new Run[] {commit, again};
  }

  private static Run once(Path runDir, Path input, String name, String closeTimeout)
      throws Exception {
    Map<String, String> keys = new LinkedHashMap<>();
    keys.put("source", "file:" + input);
    keys.put("catalog.type", "hadoop");
    keys.put("catalog.warehouse", runDir.resolve("warehouse").toString());
    keys.put("checkpoint.interval", "2s");
    keys.put("sink.max-latency", "1h");
    keys.put("parallelism.sink", "2");
    JobConfig config = JobConfig.fromMap(keys);
    Configuration conf = new Configuration();
    conf.setString("taskmanager.numberOfTaskSlots", "4");
    if (!closeTimeout.isEmpty()) {
      conf.setString("source.reader.close.timeout", closeTimeout);
    }
    conf.setString(
        "execution.checkpointing.dir", runDir.resolve("checkpoints-" + name).toUri().toString());
    long cpu0 = processCpuNanos();
    long wall0 = System.nanoTime();
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
    SpatialIngestJob.build(env, config, true);
    double buildS = (System.nanoTime() - wall0) / 1e9;
    JobExecutionResult result = env.execute("start-cost-" + name);
    double wallS = (System.nanoTime() - wall0) / 1e9;
    double cpuS = (processCpuNanos() - cpu0) / 1e9;
    Long skipped = result.getAccumulatorResult(ResumeFilter.SKIPPED_ACCUMULATOR);
    return new Run(buildS, wallS, cpuS, rows(config), skipped == null ? 0 : skipped);
  }

  private static long rows(JobConfig config) throws Exception {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
    long n = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).select("id").build()) {
      for (Record ignored : rows) {
        n++;
      }
    }
    return n;
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
