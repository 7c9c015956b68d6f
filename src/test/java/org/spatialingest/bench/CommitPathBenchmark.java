package org.spatialingest.bench;

import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ForkJoinPool;
import java.util.function.ToLongFunction;
import java.util.stream.IntStream;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.runtime.operators.sink.CommitterOperatorFactory;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetricsModes;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.BoundedIcebergSink;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.commit.FileBatch;
import org.spatialingest.sink.commit.FileBatchAggregator;
import org.spatialingest.sink.commit.FileBatchSerializer;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ReportedPositions;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.core.WriterReportSerializer;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.RejectsTable;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TelemetryTable;

/**
 * The sink's parallelism-1 operators at scale (issue #28 part 4): the aggregator ({@link
 * FileBatchAggregator}) and the committer (Flink's {@code CommitterOperator} running {@code
 * IcebergBatchCommitter}), each in Flink's operator test harness, fed per checkpoint the reports of
 * W synthetic writers, against a real Hadoop catalog and tables (created as the job creates them).
 *
 * <p>Per checkpoint, the path a real job takes, timed on this thread: the W reports are
 * deserialized (the aggregator's task thread deserializes its network input) and processed; the
 * barrier ({@code prepareSnapshotPreBarrier}: the batch is built, its closed files stored, and it
 * is emitted) and the {@link FileBatch} serialized for the network; the aggregator's state
 * snapshot; then the committer deserializes and takes the batch, snapshots its state (the batch,
 * serialized), and at the checkpoint's completion commits: it reads the stored batch, makes one
 * append to the telemetry table with the positions in its summary, then the batch's staging runs
 * and stored batch are deleted (on the committer's delete thread, not timed). Iceberg's own commit
 * time comes from its {@link CommitReport} (catalog property {@code metrics-reporter-impl}).
 *
 * <p>Input per writer and checkpoint: {@code partitions} × {@code ranges} closed files (every
 * buffer closes at every checkpoint: the heaviest checkpoint, when all of a writer's buffers reach
 * L together), each a data file with the column metrics the table's metrics config asks for (as
 * Iceberg's Parquet writer records them), {@code seconds} ingest seconds and {@code runs} staging
 * runs (real, empty files, deleted by the committer); and positions of {@code sources} Kafka
 * partitions (default W), every writer having received rows of each (the range exchange sends every
 * writer rows of every partition), sent as the writers send them: changes since the writer's last
 * report ({@code ReportedPositions}: a closing checkpoint moves every key's lowest buffered
 * position and brings its received one, a quiet one changes nothing it must tell; the first report
 * is complete). The data files themselves are not written: neither operator opens one, and writing
 * 16 W Parquet files per checkpoint would measure the writers and the disk. After the closing
 * checkpoints come {@code quiet} checkpoints whose reports carry positions but no files (most
 * checkpoints, when files close after L).
 *
 * <pre>
 * mvn -B -Pbench verify -Dbench.class=CommitPathBenchmark -Dbench.args="writers=64,256,1024"
 * </pre>
 *
 * Arguments: {@code writers=} (64,256,1024), {@code checkpoints=} measured closing checkpoints per
 * W (20), {@code warmup=} (3), {@code quiet=} (5), {@code partitions=} (4), {@code ranges=} (4),
 * {@code seconds=} (120), {@code runs=} (1), {@code sources=} (0 = W), {@code dir=}
 * (target/bench/commit-path, emptied first). With {@code commits=N} it runs a simulated day of N
 * commits instead ({@link SimulatedDay}).
 */
public final class CommitPathBenchmark {
  private static final String UID = "spatial-sink";
  private static final SinkScope SCOPE = new SinkScope(UID, "bench", false);
  private static final String TOPIC = "telemetry";
  private static final long ROWS_PER_FILE = 2_000_000;
  private static final long FILE_BYTES = 128L << 20;
  static final LocalDate FIRST_DAY = LocalDate.of(2026, 12, 1);

  /** Threads that make the writers' reports (not measured) between the measured checkpoints. */
  private static final int GENERATOR_THREADS = 4;

  private static final ThreadMXBean THREAD = (ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private CommitPathBenchmark() {}

  /** What one run feeds the operators. */
  record Settings(
      int writers,
      int checkpoints,
      int warmup,
      int quiet,
      int partitions,
      int ranges,
      int seconds,
      int runs,
      int sources) {
    int sourceCount() {
      return sources > 0 ? sources : writers;
    }

    int filesPerCheckpoint() {
      return writers * partitions * ranges;
    }
  }

  /**
   * One checkpoint, measured (nanoseconds, bytes): the operators' step and what the table's
   * metadata holds after it.
   */
  record Checkpoint(
      boolean closing,
      Step step,
      long icebergCommit,
      long metadataJson,
      long manifestList,
      long newManifests,
      long positionsSummary) {}

  /**
   * A run's result: the measured checkpoints, heap held after GC with both operators open minus
   * before, and the check that every file was committed once.
   */
  record Run(
      Settings settings,
      List<Checkpoint> checkpoints,
      long retainedHeap,
      long filesExpected,
      long filesCommitted,
      long distinctCommitted,
      long snapshots) {}

  /** Collects Iceberg's commit reports (one per snapshot committed through a loaded table). */
  public static final class CommitTimes implements MetricsReporter {
    static final Queue<CommitReport> REPORTS = new ConcurrentLinkedQueue<>();

    public CommitTimes() {}

    @Override
    public void report(MetricsReport report) {
      if (report instanceof CommitReport commit) {
        REPORTS.add(commit);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = SinkBenchmark.keyValues(args);
    Path dir = Path.of(a.getOrDefault("dir", "target/bench/commit-path")).toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    if (a.containsKey("commits")) {
      SimulatedDay.main(a, dir);
      System.exit(0);
    }
    for (String w : a.getOrDefault("writers", "64,256,1024").split(",")) {
      Settings s =
          new Settings(
              Integer.parseInt(w.trim()),
              Integer.parseInt(a.getOrDefault("checkpoints", "20")),
              Integer.parseInt(a.getOrDefault("warmup", "3")),
              Integer.parseInt(a.getOrDefault("quiet", "5")),
              Integer.parseInt(a.getOrDefault("partitions", "4")),
              Integer.parseInt(a.getOrDefault("ranges", "4")),
              Integer.parseInt(a.getOrDefault("seconds", "120")),
              Integer.parseInt(a.getOrDefault("runs", "1")),
              Integer.parseInt(a.getOrDefault("sources", "0")));
      double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
      long start = System.nanoTime();
      Run run = run(s, dir.resolve("w" + s.writers()));
      print(run);
      System.out.printf(
          "[bench] W=%d took %.1f s; load average %.1f before, %.1f after%n",
          s.writers(),
          (System.nanoTime() - start) / 1e9,
          loadBefore,
          ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      SinkBenchmark.deleteRecursively(dir.resolve("w" + s.writers()));
    }
    System.exit(0);
  }

  /** Runs the aggregator and committer for {@code s} against fresh tables under {@code dir}. */
  static Run run(Settings s, Path dir) throws Exception {
    JobConfig config = config(dir, Map.of());
    SpatialIngestJob.ensureTables(config);
    Table table = loadTable(config);
    Input input = new Input(s, table, null);

    System.gc();
    long heapBefore = MEMORY.getHeapMemoryUsage().getUsed();
    List<Checkpoint> measured = new ArrayList<>();
    long retained;
    long generationNanos = 0;
    ForkJoinPool generators = new ForkJoinPool(GENERATOR_THREADS);
    try (Operators operators = new Operators(config, dir)) {
      int total = s.warmup() + s.checkpoints() + s.quiet();
      for (long cp = 1; cp <= total; cp++) {
        boolean closing = cp <= s.warmup() + s.checkpoints();
        long generating = System.nanoTime();
        List<byte[]> reports = input.reports(generators, cp, closing);
        generationNanos += System.nanoTime() - generating;
        CommitTimes.REPORTS.clear();

        Step st = operators.checkpoint(cp, reports);

        if (cp <= s.warmup()) {
          continue;
        }
        long iceberg = 0;
        for (CommitReport r : CommitTimes.REPORTS) {
          iceberg += r.commitMetrics().totalDuration().totalDuration().toNanos();
        }
        table.refresh();
        Snapshot current = table.currentSnapshot();
        long manifestList = 0;
        long newManifests = 0;
        long positions = 0;
        if (current != null) {
          manifestList = length(table, current.manifestListLocation());
          for (ManifestFile m : current.dataManifests(table.io())) {
            if (m.snapshotId() != null && m.snapshotId() == current.snapshotId()) {
              newManifests += m.length();
            }
          }
          positions = current.summary().getOrDefault(SnapshotSummaryKeys.POSITIONS, "").length();
        }
        measured.add(
            new Checkpoint(
                closing,
                st,
                iceberg,
                metadataJsonLength(table),
                manifestList,
                newManifests,
                positions));
      }
      // the synthetic writers' own bookkeeping (what each told the aggregator) is the writers'
      // memory, not the p = 1 operators'
      input.reported.clear();
      System.gc();
      retained = MEMORY.getHeapMemoryUsage().getUsed() - heapBefore;
    } finally {
      generators.shutdownNow();
    }

    Committed committed = committed(table, input);
    System.out.printf(
        "[bench] W=%d generating the writers' reports (not measured) took %.1f s%n",
        s.writers(), generationNanos / 1e9);
    return new Run(
        s,
        measured,
        retained,
        input.written.size(),
        committed.files(),
        committed.distinct(),
        committed.snapshots());
  }

  /**
   * The job's config for a benchmark warehouse under {@code dir}, with Iceberg's commit reports
   * collected ({@link CommitTimes}) and {@code extra} keys.
   */
  static JobConfig config(Path dir, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put(
        "catalog.properties." + CatalogProperties.METRICS_REPORTER_IMPL,
        CommitTimes.class.getName());
    return TestKit.config("localhost:1", TOPIC, dir.resolve("warehouse"), m);
  }

  static Table loadTable(JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    return catalog.loadTable(Catalogs.tableIdentifier(config));
  }

  /** What the table holds of the files the synthetic writers wrote. */
  record Committed(long files, long distinct, long snapshots) {}

  static Committed committed(Table table, Input input) throws IOException {
    table.refresh();
    Set<String> committed = new HashSet<>();
    long files = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        files++;
        committed.add(t.file().location());
      }
    }
    committed.retainAll(input.written);
    long snapshots = 0;
    for (Snapshot ignored : table.snapshots()) {
      snapshots++;
    }
    return new Committed(files, committed.size(), snapshots);
  }

  static long metadataJsonLength(Table table) {
    return length(
        table, ((HasTableOperations) table).operations().current().metadataFileLocation());
  }

  /** One checkpoint through both operators, measured on this thread (nanoseconds, bytes). */
  record Step(
      long reportBytes,
      long aggReceive,
      long aggBarrier,
      long aggSnapshot,
      long aggState,
      long aggAllocated,
      long aggCpu,
      long committable,
      long commReceive,
      long commSnapshot,
      long commState,
      long commit,
      long commAllocated,
      long commCpu,
      long workerPoolCpu) {
    long aggTotal() {
      return aggReceive + aggBarrier + aggSnapshot;
    }

    long commTotal() {
      return commReceive + commSnapshot + commit;
    }
  }

  /**
   * The aggregator and Flink's committer operator over the sink the job builds, each in Flink's
   * operator test harness, and one checkpoint through them as a job runs it.
   */
  static final class Operators implements AutoCloseable {
    private final OneInputStreamOperatorTestHarness<
            CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>
        aggregator;
    private final OneInputStreamOperatorTestHarness<
            CommittableMessage<FileBatch>, CommittableMessage<FileBatch>>
        committer;
    private final WriterReportSerializer reportSerializer = new WriterReportSerializer();
    private final FileBatchSerializer batchSerializer = new FileBatchSerializer();

    Operators(JobConfig config, Path dir) throws Exception {
      SinkTables tables =
          SinkTables.of(
              List.of(
                  new SinkTable(Catalogs.tableLoader(config), TelemetryTable.layout(config)),
                  new SinkTable(Catalogs.rejectsTableLoader(config), RejectsTable.LAYOUT)));
      BoundedIcebergSink<RowBatch> sink =
          SinkHarnesses.sinkOf(
              BoundedIcebergSink.forRows(TableRouter.batched())
                  .table(tables.get(0).loader(), tables.get(0).layout())
                  .table(tables.get(1).loader(), tables.get(1).layout())
                  .closePolicy(config.closePolicy(), config.sizingBounds())
                  .uidPrefix(UID)
                  .sinkId(SCOPE.sinkId(), SCOPE.claimsUnscoped()));
      aggregator =
          new OneInputStreamOperatorTestHarness<>(
              new FileBatchAggregator(tables, SCOPE, config.sizingBounds().checkpointInterval()));
      committer =
          new OneInputStreamOperatorTestHarness<>(
              new CommitterOperatorFactory<>(sink, false, true));
      // the job's checkpoints go to a file system too; the harness's default, JobManager memory,
      // refuses a state over 5 MiB (the committer's held the batch: ~10 MB at W = 256)
      var storage = new FileSystemCheckpointStorage(dir.resolve("checkpoints").toUri());
      aggregator.setCheckpointStorage(storage);
      committer.setCheckpointStorage(storage);
      aggregator.open();
      committer.open();
    }

    /**
     * Checkpoint {@code cp}: the W serialized reports into the aggregator, its barrier and state
     * snapshot, the batch into the committer, its state snapshot, and the checkpoint's completion
     * (the commit). Also the CPU Iceberg's shared worker pool spent during the commit (a merging
     * append merges manifests there, not on the committer's thread).
     */
    Step checkpoint(long cp, List<byte[]> reports) throws Exception {
      int writers = reports.size();
      long reportBytes = reports.stream().mapToLong(b -> b.length).sum();
      long alloc0 = THREAD.getCurrentThreadAllocatedBytes();
      long cpu0 = THREAD.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      for (int w = 0; w < writers; w++) {
        WriterReport report =
            reportSerializer.deserialize(reportSerializer.getVersion(), reports.get(w));
        aggregator.processElement(
            new StreamRecord<>(new CommittableSummary<>(w, writers, cp, 1, 0)));
        aggregator.processElement(new StreamRecord<>(new CommittableWithLineage<>(report, cp, w)));
      }
      long t1 = System.nanoTime();
      aggregator.prepareSnapshotPreBarrier(cp);
      List<byte[]> emitted = new ArrayList<>();
      for (CommittableMessage<FileBatch> m : aggregator.extractOutputValues()) {
        if (m instanceof CommittableWithLineage<FileBatch> c) {
          emitted.add(batchSerializer.serialize(c.getCommittable()));
        }
      }
      aggregator.getOutput().clear();
      long t2 = System.nanoTime();
      long aggState = aggregator.snapshot(cp, cp).getStateSize();
      long t3 = System.nanoTime();
      long alloc1 = THREAD.getCurrentThreadAllocatedBytes();
      long cpu1 = THREAD.getCurrentThreadCpuTime();

      for (byte[] bytes : emitted) {
        FileBatch batch = batchSerializer.deserialize(batchSerializer.getVersion(), bytes);
        committer.processElement(
            new StreamRecord<>(new CommittableSummary<>(0, 1, batch.checkpointId(), 1, 0)));
        committer.processElement(
            new StreamRecord<>(new CommittableWithLineage<>(batch, batch.checkpointId(), 0)));
      }
      long t4 = System.nanoTime();
      long commState = committer.snapshot(cp, cp).getStateSize();
      long t5 = System.nanoTime();
      long pool0 = workerPoolCpu();
      aggregator.notifyOfCompletedCheckpoint(cp);
      long t6 = System.nanoTime();
      committer.notifyOfCompletedCheckpoint(cp);
      long t7 = System.nanoTime();
      long alloc2 = THREAD.getCurrentThreadAllocatedBytes();
      long cpu2 = THREAD.getCurrentThreadCpuTime();
      long pool = workerPoolCpu() - pool0;
      committer.getOutput().clear();
      return new Step(
          reportBytes,
          t1 - t0,
          t2 - t1,
          t3 - t2,
          aggState,
          alloc1 - alloc0,
          cpu1 - cpu0,
          emitted.stream().mapToLong(b -> b.length).sum(),
          t4 - t3,
          t5 - t4,
          commState,
          (t7 - t6) + (t6 - t5),
          alloc2 - alloc1,
          cpu2 - cpu1,
          pool);
    }

    @Override
    public void close() throws Exception {
      try (aggregator;
          committer) {
        // both closed, committer first
      }
    }
  }

  /** CPU time of Iceberg's shared worker pool's threads ({@code ThreadPools.getWorkerPool()}). */
  private static long workerPoolCpu() {
    long total = 0;
    for (var info : THREAD.getThreadInfo(THREAD.getAllThreadIds())) {
      if (info != null && info.getThreadName().startsWith("iceberg-worker-pool")) {
        long cpu = THREAD.getThreadCpuTime(info.getThreadId());
        total += Math.max(0, cpu);
      }
    }
    return total;
  }

  private static long length(Table table, String location) {
    return table.io().newInputFile(location).getLength();
  }

  /** The synthetic writers: their tokens, files and positions. */
  static final class Input {
    private final Settings s;

    /** the simulated day's clock and positions, or null: every checkpoint as {@code s} says */
    private final SimulatedDay.Day day;

    private final Table table;
    private final PartitionSpec spec;
    private final MetricsConfig metricsConfig;
    private final WriterReportSerializer serializer = new WriterReportSerializer();
    private final List<String> tokens = new ArrayList<>();

    /** per writer, what its reports told the aggregator (the writer's own bookkeeping) */
    private final List<ReportedPositions> reported = new ArrayList<>();

    private final Path tableDir;
    final Set<String> written = ConcurrentHashMap.newKeySet();

    Input(Settings s, Table table, SimulatedDay.Day day) {
      this.s = s;
      this.day = day;
      this.table = table;
      this.spec = table.spec();
      this.metricsConfig = MetricsConfig.forTable(table);
      String location = table.location();
      this.tableDir = location.contains(":") ? Path.of(URI.create(location)) : Path.of(location);
      for (int w = 0; w < s.writers(); w++) {
        tokens.add(SinkFileNames.newToken());
        reported.add(new ReportedPositions());
      }
    }

    /** The W writers' reports of checkpoint {@code cp}, serialized, made on {@code generators}. */
    List<byte[]> reports(ForkJoinPool generators, long cp, boolean closing) throws Exception {
      // the writers work in parallel in a job too
      return generators
          .submit(
              () ->
                  IntStream.range(0, s.writers())
                      .parallel()
                      .mapToObj(w -> serializedReport(w, cp, closing))
                      .toList())
          .get();
    }

    byte[] serializedReport(int writer, long checkpoint, boolean closing) {
      try {
        return serializer.serialize(report(writer, checkpoint, closing));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private WriterReport report(int writer, long checkpoint, boolean closing) throws IOException {
      Random random = new Random(checkpoint * 1_000_003L + writer);
      String token = tokens.get(writer);
      List<ClosedFile> closed = new ArrayList<>();
      long now = System.currentTimeMillis();
      if (closing) {
        int n = 0;
        for (int p = 0; p < s.partitions(); p++) {
          String partition =
              spec.fields().get(0).name()
                  + "="
                  + (day != null ? day.partitionValue(checkpoint, p) : FIRST_DAY.plusDays(p));
          for (int r = 0; r < s.ranges(); r++) {
            n++;
            String name =
                String.format(
                    "%05d-%d-%s-%05d.parquet",
                    p, writer, SinkFileNames.operationId(SCOPE, token), checkpoint * 1000 + n);
            String location = table.location() + "/data/" + partition + "/" + name;
            written.add(location);
            DataFile file =
                DataFiles.builder(spec)
                    .withPath(location)
                    .withFormat(FileFormat.PARQUET)
                    .withPartitionPath(partition)
                    .withRecordCount(ROWS_PER_FILE)
                    .withFileSizeInBytes(FILE_BYTES)
                    .withMetrics(metrics(random))
                    .withSplitOffsets(List.of(4L))
                    .withSortOrder(table.sortOrder())
                    .build();
            Map<Long, Long> seconds = new HashMap<>();
            long firstSecond = now / 1000 - s.seconds();
            for (int i = 0; i < s.seconds(); i++) {
              seconds.put(firstSecond + i, ROWS_PER_FILE / s.seconds());
            }
            List<String> runs = new ArrayList<>();
            for (int i = 0; i < s.runs(); i++) {
              runs.add(
                  SinkFileNames.stagingRun(
                      table.location(), SCOPE, checkpoint, token, n * 100 + i));
              Path local =
                  tableDir.resolve(
                      "_staging/sinks/" + SCOPE.sinkId() + "/" + UID + "/" + fileName(runs.get(i)));
              Files.createDirectories(local.getParent());
              Files.write(local, new byte[0]);
            }
            closed.add(
                new ClosedFile(
                    0,
                    file,
                    spec,
                    CloseReason.LATENCY,
                    FILE_BYTES * 4,
                    firstSecond * 1000,
                    now,
                    now,
                    seconds,
                    runs));
          }
        }
      }
      // every writer receives rows of every source key in every interval; a closing checkpoint
      // moves its lowest buffered position of every key (the worst case: rows of every key were in
      // the closed files, later ones stay buffered), a quiet one leaves it
      long lastMove = closing ? checkpoint : s.warmup() + s.checkpoints();
      Map<String, Long> seen = new HashMap<>();
      Map<String, Long> buffered = new HashMap<>();
      for (int k : keys(writer)) {
        long offset = 1_000_000_000L + k * 7L + writer;
        seen.put(SourceKeys.kafka(TOPIC, k), offset + checkpoint * 50_000L);
        buffered.put(SourceKeys.kafka(TOPIC, k), offset + lastMove * 50_000L - 40_000L);
      }
      Set<String> closedKeys = closing ? seen.keySet() : Set.of();
      return reported.get(writer).next(token, closed, seen, buffered, closedKeys);
    }

    /** The source partitions whose rows the writer received: all, or the day's share of them. */
    private int[] keys(int writer) {
      int perWriter = day == null ? 0 : day.keysPerWriter();
      if (perWriter <= 0 || perWriter >= s.sourceCount()) {
        return IntStream.range(0, s.sourceCount()).toArray();
      }
      return IntStream.range(0, perWriter)
          .map(i -> (writer * perWriter + i) % s.sourceCount())
          .toArray();
    }

    private static String fileName(String location) {
      return location.substring(location.lastIndexOf('/') + 1);
    }

    /**
     * Column metrics as Iceberg's Parquet writer records them under the table's metrics config:
     * sizes and counts for every column it keeps metrics of, bounds of the mode's length; values
     * differ from file to file, as real ones do (manifests are compressed).
     */
    private Metrics metrics(Random random) {
      MetricsConfig config = metricsConfig;
      Map<Integer, Long> sizes = new HashMap<>();
      Map<Integer, Long> values = new HashMap<>();
      Map<Integer, Long> nulls = new HashMap<>();
      Map<Integer, Long> nans = new HashMap<>();
      Map<Integer, ByteBuffer> lower = new HashMap<>();
      Map<Integer, ByteBuffer> upper = new HashMap<>();
      for (Types.NestedField f : leaves(table.schema().asStruct())) {
        MetricsModes.MetricsMode mode =
            config.columnMode(table.schema().findColumnName(f.fieldId()));
        if (mode == MetricsModes.None.get()) {
          continue;
        }
        sizes.put(f.fieldId(), FILE_BYTES / 16 + random.nextInt(1 << 20));
        values.put(f.fieldId(), ROWS_PER_FILE);
        nulls.put(f.fieldId(), f.isOptional() ? (long) random.nextInt(1000) : 0L);
        if (f.type().typeId() == Type.TypeID.DOUBLE || f.type().typeId() == Type.TypeID.FLOAT) {
          nans.put(f.fieldId(), 0L);
        }
        if (mode == MetricsModes.Counts.get()) {
          continue;
        }
        int length = mode instanceof MetricsModes.Truncate t ? t.length() : 64;
        lower.put(f.fieldId(), bound(f.type(), length, false, random));
        upper.put(f.fieldId(), bound(f.type(), length, true, random));
      }
      return new Metrics(ROWS_PER_FILE, sizes, values, nulls, nans, lower, upper);
    }

    private static List<Types.NestedField> leaves(Types.StructType struct) {
      List<Types.NestedField> out = new ArrayList<>();
      for (Types.NestedField f : struct.fields()) {
        if (f.type().isStructType()) {
          out.addAll(leaves(f.type().asStructType()));
        } else if (f.type().isPrimitiveType()) {
          out.add(f);
        }
      }
      return out;
    }

    private static ByteBuffer bound(Type type, int length, boolean upper, Random random) {
      long offset = upper ? 1L << 40 : 0;
      Object value =
          switch (type.typeId()) {
            case STRING -> randomString(length, random);
            case BINARY -> {
              byte[] bytes = new byte[length];
              random.nextBytes(bytes);
              yield ByteBuffer.wrap(bytes);
            }
            case LONG, TIMESTAMP -> 1_760_000_000_000_000L + offset + random.nextInt();
            case INTEGER, DATE -> 20_400 + (upper ? 100 : 0) + random.nextInt(100);
            case DOUBLE -> (upper ? 0 : -180) + random.nextDouble() * 180;
            case FLOAT -> (upper ? 0 : -1) + random.nextFloat();
            case BOOLEAN -> upper;
            default -> null;
          };
      return value == null ? null : Conversions.toByteBuffer(type, value);
    }
  }

  private static String randomString(int length, Random random) {
    StringBuilder b = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      b.append((char) ('a' + random.nextInt(26)));
    }
    return b.toString();
  }

  private static void print(Run run) {
    Settings s = run.settings();
    List<Checkpoint> closing = run.checkpoints().stream().filter(Checkpoint::closing).toList();
    List<Checkpoint> quiet = run.checkpoints().stream().filter(c -> !c.closing()).toList();
    System.out.printf(
        "[bench] W=%d writers x %d partitions x %d ranges = %,d files per closing checkpoint,"
            + " %d ingest seconds and %d staging run(s) per file, %,d Kafka partitions;"
            + " %d closing checkpoints measured after %d warm-up, then %d quiet%n",
        s.writers(),
        s.partitions(),
        s.ranges(),
        s.filesPerCheckpoint(),
        s.seconds(),
        s.runs(),
        s.sourceCount(),
        closing.size(),
        s.warmup(),
        quiet.size());
    for (var group : List.of(Map.entry("closing", closing), Map.entry("quiet", quiet))) {
      List<Checkpoint> cps = group.getValue();
      if (cps.isEmpty()) {
        continue;
      }
      System.out.printf(
          "[bench] W=%d %s checkpoints (median / p95):%n", s.writers(), group.getKey());
      ms(s, "aggregator total ms", cps, c -> c.step().aggTotal());
      ms(s, "  its thread's CPU ms", cps, c -> c.step().aggCpu());
      ms(s, "  receive W reports ms", cps, c -> c.step().aggReceive());
      ms(s, "  barrier: batch + serialize ms", cps, c -> c.step().aggBarrier());
      ms(s, "  state snapshot ms", cps, c -> c.step().aggSnapshot());
      bytes(s, "aggregator state bytes", cps, c -> c.step().aggState());
      bytes(s, "aggregator allocated bytes", cps, c -> c.step().aggAllocated());
      bytes(s, "reports in bytes", cps, c -> c.step().reportBytes());
      bytes(s, "committable bytes", cps, c -> c.step().committable());
      ms(s, "committer total ms", cps, c -> c.step().commTotal());
      ms(s, "  its thread's CPU ms", cps, c -> c.step().commCpu());
      ms(s, "  receive batch ms", cps, c -> c.step().commReceive());
      ms(s, "  state snapshot ms", cps, c -> c.step().commSnapshot());
      ms(s, "  commit (on completion) ms", cps, c -> c.step().commit());
      ms(s, "  of it Iceberg commit ms", cps, Checkpoint::icebergCommit);
      bytes(s, "committer state bytes", cps, c -> c.step().commState());
      bytes(s, "committer allocated bytes", cps, c -> c.step().commAllocated());
      bytes(s, "positions summary bytes", cps, Checkpoint::positionsSummary);
      bytes(s, "new manifest bytes", cps, Checkpoint::newManifests);
      bytes(s, "manifest list bytes", cps, Checkpoint::manifestList);
    }
    if (closing.size() >= 2) {
      long first = closing.get(0).metadataJson();
      long last = closing.get(closing.size() - 1).metadataJson();
      System.out.printf(
          "[bench] W=%d metadata.json %,d bytes after the first measured commit, %,d after the"
              + " last: %,d bytes per commit%n",
          s.writers(), first, last, (last - first) / (closing.size() - 1));
    }
    System.out.printf(
        "[bench] W=%d heap retained with both operators open (after GC): %,d bytes%n",
        s.writers(), run.retainedHeap());
    System.out.printf(
        "[bench] W=%d committed %,d data files in %d snapshots, %,d distinct of the %,d written%s%n",
        s.writers(),
        run.filesCommitted(),
        run.snapshots(),
        run.distinctCommitted(),
        run.filesExpected(),
        run.filesCommitted() == run.filesExpected()
                && run.distinctCommitted() == run.filesExpected()
            ? ": each exactly once"
            : ": MISMATCH");
  }

  private static void ms(
      Settings s, String what, List<Checkpoint> cps, ToLongFunction<Checkpoint> f) {
    List<Long> v = cps.stream().map(f::applyAsLong).sorted().toList();
    System.out.printf(
        "[bench] W=%d   %-32s %,10.1f / %,10.1f%n",
        s.writers(), what, Percentiles.of(v, 50) / 1e6, Percentiles.of(v, 95) / 1e6);
  }

  private static void bytes(
      Settings s, String what, List<Checkpoint> cps, ToLongFunction<Checkpoint> f) {
    List<Long> v = cps.stream().map(f::applyAsLong).sorted().toList();
    System.out.printf(
        "[bench] W=%d   %-32s %,12d / %,12d%n",
        s.writers(), what, Percentiles.of(v, 50), Percentiles.of(v, 95));
  }
}
