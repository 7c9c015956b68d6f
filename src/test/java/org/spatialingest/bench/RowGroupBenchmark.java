package org.spatialingest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.distribution.ClusteredPoints;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TelemetryTable;

/**
 * Row groups per file (issue #36 part 3): the same clustered backfill written by our sink with
 * Parquet row groups of T/n for several n, then, per table, what the query set's 10°×10° boxes read
 * ({@link ReaderCost}: files planned, row groups kept by Iceberg's row-group filter, their
 * compressed bytes) and what a full scan costs (CPU of reading every row with {@link
 * IcebergGenerics}, interleaved rounds over the tables, median).
 *
 * <p>Run: {@code mvn -B -o -Pbench verify -Dbench.class=RowGroupBenchmark
 * -Dbench.args="points=600000 target=8MB groups=1,4,8,16 rounds=5"}; writes {@code
 * target/bench/row-groups.md}.
 */
public final class RowGroupBenchmark {
  private RowGroupBenchmark() {}

  public static void main(String[] args) {
    BenchMain.run(RowGroupBenchmark::run, args);
  }

  private record Variant(
      int groups, Table table, ReaderCost.Result reads, List<Double> scanCpuMs) {}

  private static void run(String[] args) throws Exception {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("points", "600000");
    a.put("target", "8MB");
    a.put("groups", "1,4,8,16");
    a.put("rounds", "5");
    for (String arg : args) {
      int eq = arg.indexOf('=');
      a.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    Path dir = Path.of("target/bench/row-groups").toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    Path input = Files.createDirectories(dir.resolve("input"));
    int points = Integer.parseInt(a.get("points"));
    ClusteredPoints.write(input, 36, points, 8);
    List<double[]> positions = positions(input, 20_000);
    long[] times = eventTimes(input);
    QuerySet queries = QuerySet.of(positions, times[0], times[1], 36);

    long target =
        JobConfig.fromMap(Map.of("sink.target-file-size", a.get("target"))).targetFileBytes();
    List<Variant> variants = new ArrayList<>();
    for (String g : a.get("groups").split(",")) {
      int groups = Integer.parseInt(g.trim());
      Table table = write(dir.resolve("groups-" + groups), input, a.get("target"), target / groups);
      ReaderCost.Result reads =
          ReaderCost.run(table, queries, table.currentSnapshot().snapshotId(), true);
      variants.add(new Variant(groups, table, reads, new ArrayList<>()));
      System.out.printf(
          Locale.ROOT,
          "[bench] groups=%d: bbox median %.0f bytes read, %.1f files%n",
          groups,
          reads.bboxBytesReadMedian(),
          reads.bboxFilesPlannedMedian());
    }
    // full scans, interleaved: round r reads every table once, in a rotated order
    int rounds = Integer.parseInt(a.get("rounds"));
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < variants.size(); i++) {
        Variant v = variants.get((i + r) % variants.size());
        v.scanCpuMs().add(fullScanCpuMs(v.table()));
      }
    }
    StringBuilder md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "%,d clustered points over 2 days, T = %s, %d bbox queries of %.0f°, %d full-scan rounds%n%n",
            points,
            a.get("target"),
            QuerySet.BOXES,
            QuerySet.BOX_DEGREES,
            rounds));
    md.append(
        "| row groups per file (size) | files | row groups | bbox: files planned (median) | bbox: row groups read "
            + "(median) | bbox: bytes read (median) | bytes vs 1 group | full scan CPU ms (median, min–max) | vs 1 group |\n");
    md.append("|---|---|---|---|---|---|---|---|---|\n");
    Variant base = variants.get(0);
    for (Variant v : variants) {
      double[] scans = v.scanCpuMs().stream().mapToDouble(Double::doubleValue).toArray();
      double[] baseScans = base.scanCpuMs().stream().mapToDouble(Double::doubleValue).toArray();
      int files = 0;
      int rowGroups = 0;
      try (CloseableIterable<FileScanTask> tasks = v.table().newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          files++;
          List<Long> offsets = task.file().splitOffsets();
          rowGroups += offsets == null ? 1 : offsets.size();
        }
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %d (%,d B) | %d | %d | %.1f | %.1f | %,.0f | %.2f | %.0f (%.0f–%.0f) | %.2f |%n",
              v.groups(),
              target / v.groups(),
              files,
              rowGroups,
              v.reads().bboxFilesPlannedMedian(),
              median(v.reads().queries(), true),
              v.reads().bboxBytesReadMedian(),
              v.reads().bboxBytesReadMedian() / base.reads().bboxBytesReadMedian(),
              ThroughputReport.median(scans),
              Arrays.stream(scans).min().orElse(0),
              Arrays.stream(scans).max().orElse(0),
              ThroughputReport.median(scans) / ThroughputReport.median(baseScans)));
    }
    Files.writeString(dir.getParent().resolve("row-groups.md"), md.toString());
    System.out.println();
    System.out.println(md);
  }

  private static double median(List<ReaderCost.QueryResult> queries, boolean bbox) {
    double[] v =
        queries.stream()
            .filter(q -> q.query().startsWith("bbox") == bbox)
            .mapToDouble(ReaderCost.QueryResult::rowGroupsRead)
            .toArray();
    return ThroughputReport.median(v);
  }

  /** The backfill into a new warehouse whose table's row groups are {@code rowGroupBytes}. */
  private static Table write(Path runDir, Path input, String target, long rowGroupBytes)
      throws Exception {
    Map<String, String> keys = new LinkedHashMap<>();
    keys.put("source", "file:" + input);
    keys.put("catalog.type", "hadoop");
    keys.put("catalog.warehouse", runDir.resolve("warehouse").toString());
    keys.put("checkpoint.interval", "2s");
    keys.put("sink.max-latency", "1h");
    keys.put("sink.target-file-size", target);
    keys.put("sink.memory-budget", "256MB");
    keys.put("parallelism.sink", "2");
    JobConfig config = JobConfig.fromMap(keys);
    Table created =
        TableBootstrap.ensureTable(
            Catalogs.catalogLoader(config).loadCatalog(),
            Catalogs.tableIdentifier(config),
            TelemetryTable.LAYOUT,
            config.partitioning());
    created
        .updateProperties()
        .set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, Long.toString(rowGroupBytes))
        .commit();
    Configuration conf = new Configuration();
    conf.setString("taskmanager.numberOfTaskSlots", "4");
    conf.setString("execution.checkpointing.dir", runDir.resolve("checkpoints").toUri().toString());
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
    SpatialIngestJob.build(env, config, true);
    env.execute("row-groups-" + rowGroupBytes);
    return Catalogs.catalogLoader(config).loadCatalog().loadTable(Catalogs.tableIdentifier(config));
  }

  /** CPU ms of this thread reading every row of the table's current snapshot. */
  private static double fullScanCpuMs(Table table) throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long start = threads.getCurrentThreadCpuTime();
    long rows = 0;
    try (CloseableIterable<Record> all = IcebergGenerics.read(table).build()) {
      for (Record r : all) {
        rows += r == null ? 0 : 1;
      }
    }
    if (rows == 0) {
      throw new IllegalStateException("no rows in " + table.name());
    }
    return (threads.getCurrentThreadCpuTime() - start) / 1e6;
  }

  /** Up to {@code count} (x, y) positions spread over the input's records. */
  private static List<double[]> positions(Path input, int count) throws Exception {
    ObjectMapper json = new ObjectMapper();
    List<double[]> all = new ArrayList<>();
    for (Path file : files(input)) {
      try (BufferedReader lines = Files.newBufferedReader(file)) {
        String line;
        while ((line = lines.readLine()) != null) {
          JsonNode c = json.readTree(line).path("geometry").path("coordinates");
          all.add(new double[] {c.get(0).asDouble(), c.get(1).asDouble()});
        }
      }
    }
    List<double[]> picked = new ArrayList<>();
    Random random = new Random(36);
    for (int i = 0; i < count && !all.isEmpty(); i++) {
      picked.add(all.get(random.nextInt(all.size())));
    }
    return picked;
  }

  /** The first and last event time of the input, epoch ms. */
  private static long[] eventTimes(Path input) throws Exception {
    ObjectMapper json = new ObjectMapper();
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (Path file : files(input)) {
      try (BufferedReader lines = Files.newBufferedReader(file)) {
        String line;
        while ((line = lines.readLine()) != null) {
          JsonNode t = json.readTree(line).path("event_time");
          long ms = t.isNumber() ? t.asLong() : java.time.Instant.parse(t.asText()).toEpochMilli();
          first = Math.min(first, ms);
          last = Math.max(last, ms);
        }
      }
    }
    return new long[] {first, last};
  }

  private static List<Path> files(Path input) throws Exception {
    try (Stream<Path> s = Files.list(input)) {
      return s.filter(Files::isRegularFile).sorted().toList();
    }
  }
}
