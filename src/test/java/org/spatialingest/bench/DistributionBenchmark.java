package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.sink.distribution.ClusteredPoints;
import org.spatialingest.sink.distribution.KeyedAreas;
import org.spatialingest.sink.distribution.TableFiles;
import org.spatialingest.sizing.Units;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The writers' exchange ({@code sink.distribution}) measured on the live phase of the sink
 * benchmark: the same paced input, our sink in its own JVM per run, for each writer count (1, 2, 4)
 * and mode (none, hash, range):
 *
 * <ol>
 *   <li>files per commit and their p50 size (files should follow bytes / T, not the writer count);
 *   <li>on each table, the share of files Iceberg's {@code planFiles} keeps for 10° × 10° bbox
 *       filters around rows of the table (and that the filtered scan returns exactly the rows a
 *       full scan finds in the box);
 *   <li>rows per writer (from the data files' names) with a hot spot: {@code hotspot} of the points
 *       around one city.
 * </ol>
 *
 * Run: {@code mvn -B -o -Pbench verify -Dbench.class=DistributionBenchmark -Dbench.args="..."} (the
 * knobs of {@link BenchSettings}, plus {@code writers=1,2,4} and {@code modes=none,hash,range} to
 * run a subset; the hot-spot runs come after the others unless {@code hotspot} is set); report on
 * stdout and in {@code target/bench/distribution.{md,json}}. A restart or a time-out of a run fails
 * the benchmark, as in {@link SinkBenchmark}.
 *
 * <p>{@code keyed=true} and/or {@code clustered=true} measure instead, in this JVM on a local
 * cluster, the input shapes where each subtask sees another part of the map (range mode, the
 * coordinator's global ranges): a Kafka topic of 8 partitions keyed by vehicle, each partition's
 * vehicles in another area ({@code KeyedAreas}, 8 source and transform subtasks), and a bounded
 * backfill of clustered points from 8 files ({@code ClusteredPoints}, 4 source and transform
 * subtasks), at 1, 4 and 8 writers ({@code writers=} to change): files, files over those at 1
 * writer, the files' Hilbert-key intervals summed over the key span, and the share of the files a
 * 10° × 10° box around each area (the 8 areas; the 5 densest) keeps, files per time partition, and
 * rows per writer. {@code clustered.points=} (default 40,000) and {@code clustered.target=} (T,
 * default 16KB) size the clustered backfill: {@code clustered.points=200000 clustered.target=1MB}
 * is issue #37's case of a partition that fits fewer files than there are writers. Report on stdout
 * and in {@code target/bench/distribution-shapes.md}.
 */
public final class DistributionBenchmark {
  private static final String ALL_WRITERS = "1,2,4";
  private static final String ALL_MODES = "none,hash,range";
  private static final int BOXES = 20;
  private static final double BOX_DEGREES = 10;

  private DistributionBenchmark() {}

  /** One run's figures. */
  record Row(
      String mode,
      int writers,
      double hotspot,
      long rows,
      int commits,
      int files,
      double filesPerCommit,
      long p50Bytes,
      double bytesPerCommitOverT,
      double meanKeptShare,
      double maxKeptShare,
      boolean boxesExact,
      Map<Integer, Long> rowsPerWriter,
      double maxWriterOverMean) {}

  public static void main(String[] args) {
    BenchMain.run(DistributionBenchmark::run, args);
  }

  private static void run(String[] args) throws Exception {
    String writersArg = ALL_WRITERS;
    String modesArg = ALL_MODES;
    boolean keyed = false;
    boolean clustered = false;
    int clusteredPoints = InputShapes.CLUSTERED_POINTS;
    String clusteredTarget = InputShapes.CLUSTERED_TARGET;
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      if (a.equals("keyed=true")) {
        keyed = true;
      } else if (a.equals("clustered=true")) {
        clustered = true;
      } else if (a.startsWith("clustered.points=")) {
        clusteredPoints = Integer.parseInt(a.substring("clustered.points=".length()));
      } else if (a.startsWith("clustered.target=")) {
        clusteredTarget = a.substring("clustered.target=".length());
      } else if (a.startsWith("writers=")) {
        writersArg = a.substring("writers=".length());
      } else if (a.startsWith("modes=")) {
        modesArg = a.substring("modes=".length());
      } else {
        rest.add(a);
      }
    }
    if (keyed || clustered) {
      InputShapes.run(
          keyed,
          clustered,
          clusteredPoints,
          clusteredTarget,
          writersArg.equals(ALL_WRITERS)
              ? new int[] {1, 4, 8}
              : Stream.of(writersArg.split(",")).mapToInt(Integer::parseInt).toArray());
      return;
    }
    int[] writerCounts = Stream.of(writersArg.split(",")).mapToInt(Integer::parseInt).toArray();
    String[] modes = modesArg.split(",");
    BenchSettings settings = BenchSettings.parse(rest.toArray(String[]::new));
    Path dir = Path.of("target", "bench").toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    Files.createDirectories(dir);
    log("Scenario: " + settings.describe());
    List<Row> rows = new ArrayList<>();
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      InputFeed feed = new InputFeed(kafka.bootstrapServers(), settings);
      feed.generateLive(System.currentTimeMillis());
      log(
          String.format(
              "Generated the live sequence: %,d records, %.1f MB of JSON",
              settings.liveRecords(), feed.liveBytes() / 1e6));
      for (int writers : writerCounts) {
        for (String mode : modes) {
          rows.add(measure(kafka, feed, settings.withParallelism(writers), mode, dir));
        }
      }
      if (settings.hotspot() == 0) {
        BenchSettings hot = settings.withParallelism(4).withHotspot(0.8);
        InputFeed hotFeed = new InputFeed(kafka.bootstrapServers(), hot);
        hotFeed.generateLive(System.currentTimeMillis());
        for (String mode : new String[] {"none", "range"}) {
          rows.add(measure(kafka, hotFeed, hot, mode, dir));
        }
      }
    }
    String md = markdown(settings, rows, modes);
    Files.writeString(dir.resolve("distribution.md"), md);
    new ObjectMapper()
        .writerWithDefaultPrettyPrinter()
        .writeValue(
            dir.resolve("distribution.json").toFile(),
            Map.of("settings", settings.asMap(), "runs", rows));
    System.out.println();
    System.out.println(md);
  }

  private static Row measure(
      EmbeddedKafka kafka, InputFeed feed, BenchSettings settings, String mode, Path dir)
      throws Exception {
    String name = mode + "-p" + settings.parallelism() + (settings.hotspot() > 0 ? "-hot" : "");
    String topic = "dist-" + name;
    kafka.createTopic(topic, settings.partitions());
    Path runDir = Files.createDirectories(dir.resolve(name));
    Map<String, String> keys = SinkBenchmark.jobKeys(settings, kafka, topic, runDir);
    keys.put("sink.distribution", mode);
    Duration timeout = settings.phaseTimeout();
    RunResult result;
    try (ChildJvm child =
        ChildJvm.start(
            runDir,
            "A",
            "live",
            settings,
            keys,
            settings.duration().plus(timeout.multipliedBy(2)),
            false)) {
      child.awaitReady(timeout);
      InputFeed.Produced produced = feed.replayLive(topic);
      long catchUp = SinkBenchmark.awaitConsumed(produced.records(), child, timeout);
      child.requestStop();
      result = child.awaitResult(timeout.multipliedBy(2).plusMinutes(1));
      log(
          name
              + ": produced "
              + produced
              + ", caught up in "
              + catchUp
              + " ms; "
              + result.dataFiles()
              + " files in "
              + result.snapshots()
              + " snapshots");
    }
    JobConfig config = JobConfig.fromMap(keys);
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
    return figures(table, mode, settings, result);
  }

  private static Row figures(Table table, String mode, BenchSettings settings, RunResult result)
      throws Exception {
    table.refresh();
    int commits = 0;
    for (Snapshot s : table.snapshots()) {
      if (Integer.parseInt(s.summary().getOrDefault("added-data-files", "0")) > 0) {
        commits++;
      }
    }
    List<DataFile> files = new ArrayList<>();
    Map<Integer, Long> perWriter = new TreeMap<>();
    long bytes = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        files.add(t.file());
        bytes += t.file().fileSizeInBytes();
        perWriter.merge(writerOf(t.file()), t.file().recordCount(), Long::sum);
      }
    }
    List<Long> sizes = files.stream().map(DataFile::fileSizeInBytes).sorted().toList();
    long target = Units.parseBytes(settings.target());

    // boxes around rows of the table; what a filtered scan returns must be what a full scan finds
    // in the box
    List<double[]> bboxes = new ArrayList<>();
    try (CloseableIterable<Record> all = IcebergGenerics.read(table).select("id", "bbox").build()) {
      for (Record r : all) {
        Record b = (Record) r.getField("bbox");
        bboxes.add(
            new double[] {
              (Double) b.getField("xmin"),
              (Double) b.getField("ymin"),
              (Double) b.getField("xmax"),
              (Double) b.getField("ymax")
            });
      }
    }
    Random random = new Random(settings.seed());
    double keptSum = 0;
    double keptMax = 0;
    boolean exact = true;
    for (int i = 0; i < BOXES && !bboxes.isEmpty(); i++) {
      double[] centre = bboxes.get(random.nextInt(bboxes.size()));
      double x = (centre[0] + centre[2]) / 2;
      double y = (centre[1] + centre[3]) / 2;
      double[] box = {
        x - BOX_DEGREES / 2, y - BOX_DEGREES / 2, x + BOX_DEGREES / 2, y + BOX_DEGREES / 2
      };
      Expression filter =
          Expressions.and(
              Expressions.and(
                  Expressions.greaterThanOrEqual("bbox.xmax", box[0]),
                  Expressions.lessThanOrEqual("bbox.xmin", box[2])),
              Expressions.and(
                  Expressions.greaterThanOrEqual("bbox.ymax", box[1]),
                  Expressions.lessThanOrEqual("bbox.ymin", box[3])));
      int kept = 0;
      try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(filter).planFiles()) {
        for (FileScanTask ignored : tasks) {
          kept++;
        }
      }
      double share = files.isEmpty() ? 0 : kept / (double) files.size();
      keptSum += share;
      keptMax = Math.max(keptMax, share);
      long expected =
          bboxes.stream()
              .filter(b -> b[2] >= box[0] && b[0] <= box[2] && b[3] >= box[1] && b[1] <= box[3])
              .count();
      Set<String> found = new HashSet<>();
      long returned = 0;
      try (CloseableIterable<Record> it =
          IcebergGenerics.read(table).where(filter).select("id").build()) {
        for (Record r : it) {
          found.add((String) r.getField("id"));
          returned++;
        }
      }
      exact &= returned == expected && found.size() == expected;
    }
    long rowsTotal = perWriter.values().stream().mapToLong(Long::longValue).sum();
    double mean = rowsTotal / (double) settings.parallelism();
    double maxOverMean =
        perWriter.values().stream().mapToLong(Long::longValue).max().orElse(0) / Math.max(1, mean);
    return new Row(
        mode,
        settings.parallelism(),
        settings.hotspot(),
        rowsTotal,
        commits,
        files.size(),
        commits == 0 ? 0 : files.size() / (double) commits,
        Percentiles.of(sizes, 50),
        commits == 0 ? 0 : bytes / (double) commits / target,
        keptSum / Math.min(BOXES, Math.max(1, bboxes.size())),
        keptMax,
        exact,
        perWriter,
        maxOverMean);
  }

  /**
   * The writer subtask that wrote a data file: Iceberg's file names start with the subtask index.
   */
  private static int writerOf(DataFile file) {
    String name = Path.of(file.location().replace("file:", "")).getFileName().toString();
    return Integer.parseInt(name.substring(0, name.indexOf('-')));
  }

  private static String markdown(BenchSettings settings, List<Row> rows, String[] modes) {
    StringBuilder sb = new StringBuilder();
    sb.append("## Distribution benchmark\n\n").append(settings.describe()).append("\n\n");
    sb.append(
        "| mode | writers | hot spot | rows | commits | files | files / commit | p50 file | bytes per commit / T "
            + "| 10°×10° box keeps (mean / max of files) | filtered = full scan | rows per writer | max writer / mean |\n");
    sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Row r : rows) {
      sb.append(
          String.format(
              "| %s | %d | %s | %,d | %d | %d | %.2f | %s | %.2f | %.1f %% / %.1f %% | %s | %s | %.2f |%n",
              r.mode(),
              r.writers(),
              r.hotspot() > 0 ? String.format("%.0f %%", r.hotspot() * 100) : "-",
              r.rows(),
              r.commits(),
              r.files(),
              r.filesPerCommit(),
              Units.formatSize(r.p50Bytes()),
              r.bytesPerCommitOverT(),
              r.meanKeptShare() * 100,
              r.maxKeptShare() * 100,
              r.boxesExact() ? "yes" : "NO",
              r.rowsPerWriter().values(),
              r.maxWriterOverMean()));
    }
    Map<String, Double> perCommit = new LinkedHashMap<>();
    rows.stream()
        .filter(r -> r.hotspot() == 0)
        .forEach(r -> perCommit.put(r.mode() + r.writers(), r.filesPerCommit()));
    for (String mode : modes) {
      Double one = perCommit.get(mode + 1);
      Double four = perCommit.get(mode + 4);
      if (one != null && four != null && one > 0) {
        sb.append(
            String.format(
                "%n%s: files per commit at 4 writers / at 1 writer = %.2f", mode, four / one));
      }
    }
    sb.append("\n");
    return sb.toString();
  }

  private static void log(String message) {
    System.out.println("[bench] " + message);
  }

  /** The keyed and clustered input shapes, in this JVM on a local cluster. */
  static final class InputShapes {
    private static final int KEYED_ROWS_PER_PARTITION = 5_000;
    static final int CLUSTERED_POINTS = 40_000;

    /** T of the clustered backfill: a partition brings many files' worth (see benchmarks.md). */
    static final String CLUSTERED_TARGET = "16KB";

    record ShapeRow(
        String shape,
        int writers,
        String target,
        long rows,
        int files,
        double filesOverOneWriter,
        double summedSpans,
        double meanKept,
        double maxKept,
        int partitions,
        int maxFilesPerPartition,
        int writersWithRows,
        double maxWriterOverMean,
        double seconds) {}

    static void run(
        boolean keyed,
        boolean clustered,
        int clusteredPoints,
        String clusteredTarget,
        int[] writerCounts)
        throws Exception {
      Path dir = Path.of("target", "bench").toAbsolutePath();
      SinkBenchmark.deleteRecursively(dir);
      Files.createDirectories(dir);
      List<ShapeRow> rows = new ArrayList<>();
      if (keyed) {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
          for (int writers : writerCounts) {
            String topic = "keyed-" + writers;
            kafka.createTopic(topic, KeyedAreas.CENTRES.length);
            KeyedAreas.produce(kafka.bootstrapServers(), topic, KEYED_ROWS_PER_PARTITION);
            Map<String, String> keys = new LinkedHashMap<>();
            keys.put("kafka.bootstrap-servers", kafka.bootstrapServers());
            keys.put("kafka.topic", topic);
            keys.put("kafka.starting-offsets", "earliest");
            rows.add(
                measure(
                    "keyed",
                    writers,
                    8,
                    "4MB",
                    keys,
                    dir.resolve("keyed-w" + writers),
                    List.of(KeyedAreas.CENTRES),
                    rows));
          }
        }
      }
      if (clustered) {
        Path input = Files.createDirectories(dir.resolve("clustered-input"));
        ClusteredPoints points = ClusteredPoints.write(input, 28, clusteredPoints, 8);
        for (int writers : writerCounts) {
          Map<String, String> keys = new LinkedHashMap<>();
          keys.put("source", "file:" + input);
          rows.add(
              measure(
                  "clustered",
                  writers,
                  4,
                  clusteredTarget,
                  keys,
                  dir.resolve("clustered-w" + writers),
                  points.densest(5),
                  rows));
        }
      }
      StringBuilder md = new StringBuilder();
      md.append(
          "| input | writers | T | rows | files | files / at 1 writer | time partitions "
              + "| files per partition (mean / max) | key intervals summed / key span "
              + "| 10°×10° box keeps (mean / max of files) | writers with rows "
              + "| max writer / mean | job s |\n");
      md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (ShapeRow r : rows) {
        md.append(
            String.format(
                Locale.ROOT,
                "| %s | %d | %s | %,d | %d | %.2f | %d | %.1f / %d | %.3f | %.1f %% / %.1f %% | %d"
                    + " | %.2f | %.1f |%n",
                r.shape(),
                r.writers(),
                r.target(),
                r.rows(),
                r.files(),
                r.filesOverOneWriter(),
                r.partitions(),
                r.files() / (double) Math.max(1, r.partitions()),
                r.maxFilesPerPartition(),
                r.summedSpans(),
                r.meanKept() * 100,
                r.maxKept() * 100,
                r.writersWithRows(),
                r.maxWriterOverMean(),
                r.seconds()));
      }
      Files.writeString(dir.resolve("distribution-shapes.md"), md.toString());
      System.out.println();
      System.out.println(md);
    }

    private static ShapeRow measure(
        String shape,
        int writers,
        int parallelism,
        String target,
        Map<String, String> input,
        Path runDir,
        List<double[]> boxCentres,
        List<ShapeRow> earlier)
        throws Exception {
      Map<String, String> keys = new LinkedHashMap<>(input);
      keys.put("kafka.group-id", "bench-" + shape + "-" + writers);
      keys.put("catalog.type", "hadoop");
      keys.put("catalog.warehouse", runDir.resolve("warehouse").toString());
      keys.put("checkpoint.interval", "1s");
      keys.put("sink.max-latency", "1h");
      keys.put("sink.target-file-size", target);
      keys.put("sink.memory-budget", "64MB");
      keys.put("sink.distribution", "range");
      keys.put("parallelism.sink", Integer.toString(writers));
      JobConfig config = JobConfig.fromMap(keys);
      Configuration conf = new Configuration();
      conf.setString("taskmanager.numberOfTaskSlots", Integer.toString(Math.max(8, writers)));
      conf.setString(
          "execution.checkpointing.dir", runDir.resolve("checkpoints").toUri().toString());
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
      SpatialIngestJob.build(env, config, true);
      long start = System.nanoTime();
      env.execute("distribution-" + shape + "-" + writers);
      double seconds = (System.nanoTime() - start) / 1e9;
      Table table =
          Catalogs.catalogLoader(config).loadCatalog().loadTable(Catalogs.tableIdentifier(config));
      List<DataFile> files = TableFiles.files(table);
      double sum = 0;
      double max = 0;
      for (double[] c : boxCentres) {
        double kept = TableFiles.keptShare(table, files.size(), c[0], c[1], BOX_DEGREES);
        sum += kept;
        max = Math.max(max, kept);
      }
      Map<String, Integer> perPartition = new TreeMap<>();
      Map<Integer, Long> perWriter = new TreeMap<>();
      for (DataFile f : files) {
        perPartition.merge(
            table.specs().get(f.specId()).partitionToPath(f.partition()), 1, Integer::sum);
        perWriter.merge(writerOf(f), f.recordCount(), Long::sum);
      }
      logFiles(shape + " w" + writers, table, files);
      long rowCount = files.stream().mapToLong(DataFile::recordCount).sum();
      int oneWriterFiles =
          earlier.stream()
              .filter(r -> r.shape().equals(shape) && r.target().equals(target) && r.writers() == 1)
              .mapToInt(ShapeRow::files)
              .findFirst()
              .orElse(writers == 1 ? files.size() : 0);
      ShapeRow row =
          new ShapeRow(
              shape,
              writers,
              target,
              rowCount,
              files.size(),
              oneWriterFiles == 0 ? Double.NaN : files.size() / (double) oneWriterFiles,
              TableFiles.summedSpans(files),
              sum / boxCentres.size(),
              max,
              perPartition.size(),
              perPartition.values().stream().mapToInt(Integer::intValue).max().orElse(0),
              perWriter.size(),
              perWriter.values().stream().mapToLong(Long::longValue).max().orElse(0)
                  / (rowCount / (double) writers),
              seconds);
      log(row.toString());
      return row;
    }

    /**
     * One line per file, by partition and key (writer, size, rows, its key interval as a share of
     * the partition's, the snapshot's close reasons), and the run's encoded/buffered ratio: where
     * files beyond bytes / T come from (short first files, remainders, wide packed files).
     */
    private static void logFiles(String run, Table table, List<DataFile> files) {
      Map<Long, String> reasons = new TreeMap<>();
      long buffered = 0;
      long written = 0;
      for (Snapshot s : table.snapshots()) {
        StringBuilder r = new StringBuilder();
        s.summary()
            .forEach(
                (k, v) -> {
                  if (k.startsWith(SnapshotSummaryKeys.CLOSED_PREFIX)) {
                    r.append(k.substring(SnapshotSummaryKeys.CLOSED_PREFIX.length()))
                        .append('=')
                        .append(v)
                        .append(' ');
                  }
                });
        reasons.put(s.sequenceNumber(), r.toString().trim());
        buffered +=
            Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.BUFFERED_BYTES, "0"));
        written += Long.parseLong(s.summary().getOrDefault(SnapshotSummaryKeys.FILE_BYTES, "0"));
      }
      log(
          String.format(
              Locale.ROOT,
              "files %s: %d files, %d snapshots, file/buffered bytes %.3f",
              run,
              files.size(),
              reasons.size(),
              written / (double) Math.max(1, buffered)));
      Map<String, List<DataFile>> byPartition = new TreeMap<>();
      for (DataFile f : files) {
        byPartition
            .computeIfAbsent(
                table.specs().get(f.specId()).partitionToPath(f.partition()),
                k -> new ArrayList<>())
            .add(f);
      }
      byPartition.forEach(
          (partition, list) -> {
            list.sort(java.util.Comparator.comparingLong(f -> TableFiles.bound(f, true)));
            long lo = list.stream().mapToLong(f -> TableFiles.bound(f, true)).min().orElse(0);
            double span = Math.max(1, TableFiles.totalSpan(list));
            for (DataFile f : list) {
              log(
                  String.format(
                      Locale.ROOT,
                      "file %s %s w%d %,d B %,d rows keys %.3f-%.3f seq %d (%s)",
                      run,
                      partition,
                      writerOf(f),
                      f.fileSizeInBytes(),
                      f.recordCount(),
                      (TableFiles.bound(f, true) - lo) / span,
                      (TableFiles.bound(f, false) - lo) / span,
                      f.dataSequenceNumber(),
                      reasons.get(f.dataSequenceNumber())));
            }
          });
    }
  }
}
