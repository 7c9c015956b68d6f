package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.flink.sink.IcebergSink;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;

/**
 * One measured run in its own JVM (so peak heap is per run) on its own MiniCluster and warehouse. Same source,
 * transform, parallelism and checkpointing for both variants; only the sink differs:
 * <ul>
 *   <li>{@code A}: {@link SpatialIngestJob#sink} (our bounded sink, policy from the job keys);
 *   <li>{@code B}: Iceberg's {@code IcebergSink.forRowData(rows).tableLoader(..).append()} into a table created by
 *       the same {@link TableBootstrap#ensureTable}.
 * </ul>
 * Phase {@code live}: unbounded source; writes a ready file once the job runs, then waits for a line on stdin and
 * stops the job with a draining savepoint (every produced record gets committed). Phase {@code throughput}: bounded
 * source over the backlog.
 *
 * <p>Arguments: {@code A|B live|throughput <result.json> <ready-file> <parallelism> key=value...} (job keys).
 */
public final class BenchChild {
  private BenchChild() {}

  public static void main(String[] args) throws Exception {
    try (HeapWatcher heap = new HeapWatcher()) {
      String variant = args[0];
      String phase = args[1];
      Path resultFile = Path.of(args[2]);
      Path readyFile = Path.of(args[3]);
      int parallelism = Integer.parseInt(args[4]);
      Map<String, String> keys = new LinkedHashMap<>();
      for (int i = 5; i < args.length; i++) {
        int eq = args[i].indexOf('=');
        keys.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      }
      JobConfig config = JobConfig.fromMap(keys);
      boolean live = phase.equals("live");

      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      env.setParallelism(parallelism);
      SpatialIngestJob.configureCheckpointing(env, config);
      DataStream<RowData> rows = SpatialIngestJob.transform(SpatialIngestJob.source(env, config, !live), config);
      switch (variant) {
        case "A" -> SpatialIngestJob.sink(rows, config);
        case "B" -> icebergSink(rows, config, parallelism);
        default -> throw new IllegalArgumentException("variant must be A or B: " + variant);
      }

      long drainMs = 0;
      long submitted = System.nanoTime();
      JobExecutionResult result;
      if (live) {
        JobClient job = env.executeAsync("bench-" + variant + "-" + phase);
        while (job.getJobStatus().get() != JobStatus.RUNNING) {
          Thread.sleep(50);
        }
        Files.writeString(readyFile, "ready");
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        long stop = System.nanoTime();
        Path savepoints = Files.createTempDirectory(resultFile.getParent(), "savepoint-");
        job.stopWithSavepoint(true, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
            .get(10, TimeUnit.MINUTES);
        result = job.getJobExecutionResult().get(10, TimeUnit.MINUTES);
        drainMs = (System.nanoTime() - stop) / 1_000_000;
      } else {
        result = env.execute("bench-" + variant + "-" + phase);
      }
      long clientWallMs = (System.nanoTime() - submitted) / 1_000_000;

      Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
      Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
      TableStats.Stats s = TableStats.of(table);
      RunResult r = new RunResult(variant, phase, s.rows(), s.snapshots(), s.dataFiles(), s.fileBytes(), s.p10(),
          s.p50(), s.p90(), s.max(), s.maxRowAgeAtCommitMs(), s.closeReasons(), heap.peakSampledBytes(),
          heap.peakAfterGcBytes(), heap.maxHeapBytes(), result.getNetRuntime(TimeUnit.MILLISECONDS), clientWallMs,
          drainMs);
      new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(resultFile.toFile(), r);
    }
    System.exit(0); // MiniCluster and Kafka client threads are not all daemons
  }

  /** Variant B: Iceberg's own Flink sink, same table definition, writer parallelism = ours. */
  static void icebergSink(DataStream<RowData> rows, JobConfig config, int parallelism) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    TableBootstrap.ensureTable(catalog, Catalogs.tableIdentifier(config), org.spatialingest.table.TelemetryTable.LAYOUT,
        config.partitioning());
    IcebergSink.forRowData(rows)
        .tableLoader(Catalogs.tableLoader(config))
        .writeParallelism(parallelism)
        .append();
  }
}
