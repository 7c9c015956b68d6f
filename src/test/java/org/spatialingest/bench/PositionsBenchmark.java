package org.spatialingest.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.MixedInput;
import org.spatialingest.source.TelemetrySources;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.CommittedRecords;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TablePositions;

/**
 * Positions at scale (issue #28 part 3): a backfill of many small files, then the same backfill
 * again without state, beside a job that only reads the files; the summary sizes; and the
 * start-without-state look-up ({@link CommittedRecords}) timed and weighed, also with 1,000 Kafka
 * partitions recorded. In-process MiniCluster, Hadoop catalog under {@code dir}.
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.class=PositionsBenchmark -Dbench.args="files=10000 lines=20"
 * </pre>
 *
 * Arguments: {@code files=} (10000), {@code lines=} records per file (20), {@code parallelism=}
 * (2), {@code dir=} (target/bench/positions, emptied first).
 */
public final class PositionsBenchmark {
  private PositionsBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = SinkBenchmark.keyValues(args);
    int files = Integer.parseInt(a.getOrDefault("files", "10000"));
    int lines = Integer.parseInt(a.getOrDefault("lines", "20"));
    int parallelism = Integer.parseInt(a.getOrDefault("parallelism", "2"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
    Path dir = Path.of(a.getOrDefault("dir", "target/bench/positions")).toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    Path input = Files.createDirectories(dir.resolve("in"));
    for (int f = 0; f < files; f++) {
      List<byte[]> values = MixedInput.of("f" + f + "-", lines, 0, 0).values();
      StringBuilder text = new StringBuilder();
      for (byte[] v : values) {
        text.append(new String(v, StandardCharsets.UTF_8)).append('\n');
      }
      Files.writeString(input.resolve(String.format("part-%05d.ndjson", f)), text);
    }
    JobConfig config =
        TestKit.config(
            "localhost:1",
            "unused",
            dir.resolve("warehouse"),
            Map.of("source", "file:" + input, "checkpoint.interval", "1s"));
    System.out.printf(
        "[bench] %,d files x %,d records, parallelism %d%n", files, lines, parallelism);

    long first = runJob(config, parallelism);
    Table table = TestKit.table(config);
    long snapshots = table.currentSnapshot().sequenceNumber();
    long maxSummary = 0;
    for (Snapshot s : table.snapshots()) {
      maxSummary =
          Math.max(
              maxSummary,
              s.summary().entrySet().stream()
                  .mapToLong(e -> e.getKey().length() + e.getValue().length())
                  .sum());
    }
    long metadata =
        table
            .io()
            .newInputFile(
                ((HasTableOperations) table).operations().current().metadataFileLocation())
            .getLength();
    System.out.printf("[bench] first run:              %,7d ms%n", first);
    System.out.printf(
        "[bench] snapshots %d, largest snapshot summary %,d bytes, metadata.json %,d bytes%n",
        snapshots, maxSummary, metadata);
    // alternated, so both see the same load of a shared machine
    long[] reads = new long[rounds];
    long[] reruns = new long[rounds];
    for (int i = 0; i < rounds; i++) {
      reads[i] = readOnly(config, parallelism);
      reruns[i] = runJob(config, parallelism);
      System.out.printf(
          "[bench] round %d: read the files only %,7d ms, re-run without state %,7d ms (%.2fx)%n",
          i + 1, reads[i], reruns[i], reruns[i] / (double) reads[i]);
    }
    java.util.Arrays.sort(reads);
    java.util.Arrays.sort(reruns);
    System.out.printf(
        "[bench] medians: read %,d ms, re-run %,d ms: re-run / read %.2f%n",
        reads[rounds / 2], reruns[rounds / 2], reruns[rounds / 2] / (double) reads[rounds / 2]);
    table.refresh();
    List<Record> rows = TestKit.rows(table);
    System.out.printf(
        "[bench] the %d re-runs committed %d snapshots; table rows %,d, distinct ids %,d (expected %,d)%n",
        rounds,
        table.currentSnapshot().sequenceNumber() - snapshots,
        rows.size(),
        TestKit.distinctIds(rows).size(),
        (long) files * lines);

    lookup("look-up, files only", config, table);
    // the same table with 1,000 Kafka partitions recorded as well
    Map<String, Long> partitions = new HashMap<>();
    for (int p = 0; p < 1_000; p++) {
      partitions.put(SourceKeys.kafka("vehicle-telemetry", p), 9_000_000_000L + 7_919L * p);
    }
    var append = table.newFastAppend();
    TablePositions.summary(config.sinkId(), KafkaIds.unknown(), partitions).forEach(append::set);
    append.commit();
    table.refresh();
    System.out.printf(
        "[bench] summary with 1,000 partitions: %,d bytes of %s%n",
        table.currentSnapshot().summary().get(SnapshotSummaryKeys.POSITIONS).length(),
        SnapshotSummaryKeys.POSITIONS);
    lookup("look-up, files + 1,000 partitions", config, table);
    System.exit(0);
  }

  private static void lookup(String what, JobConfig config, Table table) throws Exception {
    Table rejects =
        Catalogs.catalogLoader(config)
            .loadCatalog()
            .loadTable(Catalogs.rejectsTableIdentifier(config));
    long rejectsSnapshot =
        rejects.currentSnapshot() == null ? -1 : rejects.currentSnapshot().snapshotId();
    long best = Long.MAX_VALUE;
    CommittedRecords committed = null;
    long heapBefore = 0;
    for (int i = 0; i < 3; i++) {
      committed = null;
      heapBefore = usedHeap();
      long start = System.nanoTime();
      committed =
          CommittedRecords.read(
              table,
              table.currentSnapshot().snapshotId(),
              rejects,
              rejectsSnapshot,
              config.sinkId(),
              KafkaIds.unknown());
      best = Math.min(best, (System.nanoTime() - start) / 1_000_000);
    }
    long heap = usedHeap() - heapBefore;
    System.out.printf(
        "[bench] %s: best of 3 %,d ms; %d files, %,d line ranges, %d partitions; retained ~%,d KB%n",
        what,
        best,
        committed.files().size(),
        committed.files().values().stream().mapToLong(r -> r.rangeCount()).sum(),
        committed.positions().size(),
        heap / 1024);
  }

  private static long usedHeap() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  private static long runJob(JobConfig config, int parallelism) throws Exception {
    StreamExecutionEnvironment env = environment(parallelism);
    SpatialIngestJob.build(env, config, true);
    long start = System.nanoTime();
    env.execute("positions-benchmark");
    return (System.nanoTime() - start) / 1_000_000;
  }

  /** The same file source into a discarding sink: what reading the files costs. */
  private static long readOnly(JobConfig config, int parallelism) throws Exception {
    StreamExecutionEnvironment env = environment(parallelism);
    env.fromSource(
            TelemetrySources.file(config.input().filePath()),
            WatermarkStrategy.noWatermarks(),
            "file-source")
        .sinkTo(new DiscardingSink<>());
    long start = System.nanoTime();
    env.execute("read-only");
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static StreamExecutionEnvironment environment(int parallelism) {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    return env;
  }
}
