package org.spatialingest.bench;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.table.Catalogs;

/**
 * A backfill over many day partitions (issue #38 item 4): the same points written by the job once
 * in id order (every device sends all its days in time order, devices one after another: more
 * interleaved partitions than {@code sink.max-open-partitions}, so buffers are parked) and once
 * sorted by event time, in interleaved rounds, each into a new warehouse. Per run: the process's
 * CPU time for the job, wall time, the largest heap left after a collection, files and mean file
 * size, parks. Optionally a third variant, {@code id-noparking}: id order with {@code
 * sink.max-parked-partitions: 0} (the behaviour before parking).
 *
 * <p>Run: {@code mvn -B -o -Pbench verify -Dbench.class=BackfillBenchmark
 * -Dbench.args="points=120000 days=90 open=16 target=256KB rounds=3"}; writes {@code
 * target/bench/backfill.md}.
 */
public final class BackfillBenchmark {
  private BackfillBenchmark() {}

  public static void main(String[] args) {
    BenchMain.run(BackfillBenchmark::run, args);
  }

  private record Result(
      double cpuS, double wallS, long heapAfterGc, int files, long bytes, long parks) {}

  private static void run(String[] args) throws Exception {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("points", "120000");
    a.put("days", "90");
    a.put("open", "16");
    a.put("target", "256KB");
    a.put("rounds", "3");
    a.put("variants", "id,sorted");
    for (String arg : args) {
      int eq = arg.indexOf('=');
      a.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    Path dir = Path.of("target/bench/backfill").toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    int days = Integer.parseInt(a.get("days"));
    List<String> lines = backfill(Integer.parseInt(a.get("points")), days);
    Path idOrder = Files.createDirectories(dir.resolve("input-id"));
    Files.write(idOrder.resolve("backfill.ndjson"), lines, StandardCharsets.UTF_8);
    List<String> byTime = new ArrayList<>(lines);
    byTime.sort((x, y) -> Long.compare(eventTime(x), eventTime(y)));
    Path sorted = Files.createDirectories(dir.resolve("input-sorted"));
    Files.write(sorted.resolve("backfill.ndjson"), byTime, StandardCharsets.UTF_8);

    List<String> variants = Arrays.asList(a.get("variants").split(","));
    Map<String, List<Result>> results = new LinkedHashMap<>();
    variants.forEach(v -> results.put(v, new ArrayList<>()));
    AtomicLong parks = new AtomicLong();
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_PARKING) {
            parks.incrementAndGet();
          }
        });
    try (HeapWatcher heap = new HeapWatcher()) {
      // warm-up: one sorted run, not reported (class loading, JIT)
      write(dir.resolve("warm-up"), sorted, a, "1024");
      int rounds = Integer.parseInt(a.get("rounds"));
      int run = 0;
      for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < variants.size(); i++) {
          String v = variants.get((i + r) % variants.size());
          heap.reset();
          parks.set(0);
          long cpu0 = processCpuNanos();
          long wall0 = System.nanoTime();
          Table table =
              write(
                  dir.resolve("run-" + run++),
                  v.equals("sorted") ? sorted : idOrder,
                  a,
                  v.equals("id-noparking") ? "0" : "1024");
          double cpuS = (processCpuNanos() - cpu0) / 1e9;
          double wallS = (System.nanoTime() - wall0) / 1e9;
          int files = 0;
          long bytes = 0;
          try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask t : tasks) {
              files++;
              bytes += t.file().fileSizeInBytes();
            }
          }
          Result res = new Result(cpuS, wallS, heap.peakAfterGcBytes(), files, bytes, parks.get());
          results.get(v).add(res);
          System.out.printf(
              Locale.ROOT,
              "[bench] round %d %s: cpu %.1f s, wall %.1f s, heap after GC %.0f MB, %d files of %.0f KB, %d parks%n",
              r + 1,
              v,
              cpuS,
              wallS,
              res.heapAfterGc() / 1e6,
              files,
              bytes / 1e3 / Math.max(1, files),
              res.parks());
        }
      }
    }
    StringBuilder md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "%s points over %d days, sink.max-open-partitions %s, T = %s, %s interleaved rounds (median, min–max)%n%n",
            a.get("points"),
            days,
            a.get("open"),
            a.get("target"),
            a.get("rounds")));
    md.append(
        "| input | CPU s | vs sorted | wall s | heap after GC, MB | files | mean file KB | parks |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    double sortedCpu =
        results.containsKey("sorted") ? median(results.get("sorted"), Result::cpuS) : Double.NaN;
    for (Map.Entry<String, List<Result>> e : results.entrySet()) {
      List<Result> rs = e.getValue();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %.1f (%.1f–%.1f) | %.2f | %.1f (%.1f–%.1f) | %.0f (%.0f–%.0f) | %.0f | %.0f | %.0f |%n",
              e.getKey(),
              median(rs, Result::cpuS),
              rs.stream().mapToDouble(Result::cpuS).min().orElse(0),
              rs.stream().mapToDouble(Result::cpuS).max().orElse(0),
              median(rs, Result::cpuS) / sortedCpu,
              median(rs, Result::wallS),
              rs.stream().mapToDouble(Result::wallS).min().orElse(0),
              rs.stream().mapToDouble(Result::wallS).max().orElse(0),
              median(rs, x -> x.heapAfterGc() / 1e6),
              rs.stream().mapToDouble(x -> x.heapAfterGc() / 1e6).min().orElse(0),
              rs.stream().mapToDouble(x -> x.heapAfterGc() / 1e6).max().orElse(0),
              median(rs, x -> (double) x.files()),
              median(rs, x -> x.bytes() / 1e3 / Math.max(1, x.files())),
              median(rs, x -> (double) x.parks())));
    }
    Files.writeString(dir.getParent().resolve("backfill.md"), md.toString());
    System.out.println();
    System.out.println(md);
  }

  private static double median(List<Result> rs, java.util.function.ToDoubleFunction<Result> f) {
    return ThroughputReport.median(rs.stream().mapToDouble(f).toArray());
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * {@code points} points of devices that each send every one of {@code days} days in time order,
   * devices one after another (id order).
   */
  static List<String> backfill(int points, int days) {
    int perDeviceDay = 33;
    int devices = Math.max(1, points / (days * perDeviceDay));
    Random random = new Random(38);
    long day0 = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
    List<String> lines = new ArrayList<>(devices * days * perDeviceDay);
    for (int device = 0; device < devices; device++) {
      double lon = -10 + random.nextDouble() * 40;
      double lat = 35 + random.nextDouble() * 25;
      for (int day = 0; day < days; day++) {
        for (int i = 0; i < perDeviceDay; i++) {
          lon += (random.nextDouble() - 0.5) * 0.01;
          lat += (random.nextDouble() - 0.5) * 0.01;
          lines.add(
              String.format(
                  Locale.ROOT,
                  "{\"id\":\"dev%04d-%02d-%02d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\","
                      + "\"coordinates\":[%.6f,%.6f]},\"properties\":{\"speed\":%.1f}}",
                  device,
                  day,
                  i,
                  day0 + day * 86_400_000L + i * 2_000_000L + device * 1_000L,
                  lon,
                  lat,
                  random.nextDouble() * 30));
        }
      }
    }
    return lines;
  }

  private static long eventTime(String line) {
    int at = line.indexOf("\"event_time\":") + "\"event_time\":".length();
    return Long.parseLong(line.substring(at, line.indexOf(',', at)));
  }

  private static Table write(Path runDir, Path input, Map<String, String> a, String maxParked)
      throws Exception {
    Map<String, String> keys = new LinkedHashMap<>();
    keys.put("source", "file:" + input);
    keys.put("catalog.type", "hadoop");
    keys.put("catalog.warehouse", runDir.resolve("warehouse").toString());
    keys.put("checkpoint.interval", "2s");
    keys.put("sink.max-latency", "1h");
    keys.put("sink.target-file-size", a.get("target"));
    keys.put("sink.max-open-partitions", a.get("open"));
    keys.put("sink.max-parked-partitions", maxParked);
    keys.put("parallelism.sink", "2");
    JobConfig config = JobConfig.fromMap(keys);
    Configuration conf = new Configuration();
    conf.setString("taskmanager.numberOfTaskSlots", "4");
    conf.setString("execution.checkpointing.dir", runDir.resolve("checkpoints").toUri().toString());
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
    SpatialIngestJob.build(env, config, true);
    env.execute("backfill-" + input.getFileName());
    return Catalogs.catalogLoader(config).loadCatalog().loadTable(Catalogs.tableIdentifier(config));
  }
}
