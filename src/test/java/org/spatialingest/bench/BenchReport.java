package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Renders one benchmark run side by side as Markdown and as JSON. */
final class BenchReport {
  /** Files B/A at least this, ... */
  static final double GOAL_FILE_RATIO = 8.0;

  /** ... at a throughput A/B of at least this (the goal). */
  static final double GOAL_THROUGHPUT_RATIO = 1.0;

  private final BenchSettings settings;
  private final InputFeed.Produced producedA;
  private final InputFeed.Produced producedB;
  private final long expectedLive;
  private final long[] catchUpMs;
  private final RunResult liveA;
  private final RunResult liveB;
  private final RunResult tputA;
  private final RunResult tputB;

  BenchReport(
      BenchSettings settings,
      long expectedLive,
      InputFeed.Produced producedA,
      InputFeed.Produced producedB,
      long[] catchUpMs,
      RunResult liveA,
      RunResult liveB,
      RunResult tputA,
      RunResult tputB) {
    this.settings = settings;
    this.expectedLive = expectedLive;
    this.producedA = producedA;
    this.producedB = producedB;
    this.catchUpMs = catchUpMs;
    this.liveA = liveA;
    this.liveB = liveB;
    this.tputA = tputA;
    this.tputB = tputB;
  }

  double recordsPerSecond(RunResult r) {
    return settings.backlog() * 1000.0 / Math.max(1, r.readToEndMs());
  }

  double fileRatio() {
    return (double) liveB.dataFiles() / Math.max(1, liveA.dataFiles());
  }

  double throughputRatio() {
    return recordsPerSecond(tputA) / recordsPerSecond(tputB);
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append(
        "## Sink benchmark: A = our BoundedIcebergSink (bounded policy), B = Iceberg's IcebergSink\n\n");
    md.append("One run, ")
        .append(whenAndWhere())
        .append(". Scenario: ")
        .append(settings.describe())
        .append(".\n\n");
    md.append("| | A: ours (bounded) | B: IcebergSink | ratio |\n|---|---:|---:|---:|\n");
    if (tputA != null) {
      throughputRows(md);
    }
    md.append(
        String.format(
            Locale.ROOT,
            "| **live phase**: %s at %,d rec/s offered, drained once consumed | | | |%n",
            settings.duration().toSeconds() + " s",
            settings.rate()));
    row(
        md,
        "produced (achieved rate, max behind schedule)",
        produced(producedA),
        produced(producedB),
        "");
    row(
        md,
        "rows committed",
        n(liveA.rowsCommitted()) + " of " + n(expectedLive),
        n(liveB.rowsCommitted()) + " of " + n(expectedLive),
        "");
    row(
        md,
        "snapshots",
        n(liveA.snapshots()),
        n(liveB.snapshots()),
        "B/A = " + f2(ratio(liveB.snapshots(), liveA.snapshots())));
    row(
        md,
        "**data files**",
        n(liveA.dataFiles()),
        n(liveB.dataFiles()),
        "**B/A = " + f2(fileRatio()) + "**");
    row(
        md,
        "file size p10 / p50 / p90",
        sizes(liveA),
        sizes(liveB),
        "p50 A/B = " + f2(ratio(liveA.fileP50(), liveB.fileP50())));
    row(
        md,
        "largest file / total bytes",
        mb(liveA.fileMax()) + " / " + mb(liveA.fileBytes()),
        mb(liveB.fileMax()) + " / " + mb(liveB.fileBytes()),
        "bytes A/B = " + f2(ratio(liveA.fileBytes(), liveB.fileBytes())));
    row(
        md,
        "max row age at commit (snapshot time - ingest_time lower bound)",
        secs(liveA.maxRowAgeAtCommitMs()),
        secs(liveB.maxRowAgeAtCommitMs()),
        "");
    row(
        md,
        "caught up after production ended (every record read by the job)",
        secs(catchUpMs[0]),
        secs(catchUpMs[1]),
        "");
    row(
        md,
        "drain after stop (stop-with-savepoint)",
        secs(liveA.drainMs()),
        secs(liveB.drainMs()),
        "");
    row(
        md,
        "peak heap used (sampled) / after GC",
        heap(liveA),
        heap(liveB),
        "sampled A/B = " + f2(ratio(liveA.peakHeapSampledBytes(), liveB.peakHeapSampledBytes())));
    row(md, "A: files closed by reason", reasons(liveA), "n/a", "");
    checkpointRows(md, liveA, liveB);
    md.append('\n');
    md.append(CHECKPOINT_DEFINITIONS).append(stagedNote()).append("\n\n");
    boolean filesMet = fileRatio() >= GOAL_FILE_RATIO;
    if (tputA == null) {
      md.append(
          String.format(
              Locale.ROOT,
              "Goal (>= %.0fx fewer files): files B/A = %.2f; no throughput rounds of the mix ran.%n",
              GOAL_FILE_RATIO,
              fileRatio()));
      return md.toString();
    }
    boolean tputMet = throughputRatio() >= GOAL_THROUGHPUT_RATIO;
    md.append(
        String.format(
            Locale.ROOT,
            "Goal (>= %.0fx fewer files at >= %.1fx the throughput): files B/A = %.2f "
                + "(%s), throughput A/B = %.2f (%s).%n",
            GOAL_FILE_RATIO,
            GOAL_THROUGHPUT_RATIO,
            fileRatio(),
            filesMet ? "met" : "NOT met, " + f2(GOAL_FILE_RATIO / fileRatio()) + "x short",
            throughputRatio(),
            tputMet ? "met" : "NOT met, A is " + f0(100 * (1 - throughputRatio())) + " % slower"));
    return md.toString();
  }

  private void throughputRows(StringBuilder md) {
    md.append(
        String.format(
            Locale.ROOT,
            "| **throughput phase**: backlog N = %,d, bounded job | | | |%n",
            settings.backlog()));
    row(
        md,
        "records/s (N / first record read to job end; the mix round with the median A/B)",
        f0(recordsPerSecond(tputA)),
        f0(recordsPerSecond(tputB)),
        "A/B = " + f2(throughputRatio()));
    row(md, "job runtime", secs(tputA.jobRuntimeMs()), secs(tputB.jobRuntimeMs()), "");
    row(md, "rows committed", n(tputA.rowsCommitted()), n(tputB.rowsCommitted()), "");
    row(
        md,
        "snapshots / data files",
        tputA.snapshots() + " / " + tputA.dataFiles(),
        tputB.snapshots() + " / " + tputB.dataFiles(),
        "files B/A = " + f2(ratio(tputB.dataFiles(), tputA.dataFiles())));
    row(md, "peak heap used (sampled) / after GC", heap(tputA), heap(tputB), "");
    row(md, "A: files closed by reason", reasons(tputA), "n/a", "");
    checkpointRows(md, tputA, tputB);
  }

  /** When a report was made, on how many cores (the machine is shared). */
  static String whenAndWhere() {
    return Instant.now() + ", " + Runtime.getRuntime().availableProcessors() + " cores (shared)";
  }

  /** How the checkpoint rows are measured (printed under the table). */
  static final String CHECKPOINT_DEFINITIONS =
      "Checkpoint rows, per completed checkpoint (savepoints excluded): "
          + "*checkpointed bytes* = Flink's `checkpointed_size` from the child's REST `/jobs/<id>/checkpoints` history "
          + "(what the checkpoint persisted; = `state_size` with the default hashmap backend) + the bytes the sink staged "
          + "at that barrier (writer counter `spatialSink.stagedBytes`, summed over subtasks, read from REST metrics when "
          + "the checkpoint is first seen completed; 0 for a sink without it); *bytes arrived* = the bytes of the Kafka "
          + "record values (the JSON as produced, uncompressed) that passed a probe chained right after the source between "
          + "the previous completed checkpoint's barrier and this one's. The ratio covers checkpoints with bytes arrived > "
          + "0 (after a bounded source ends, checkpoints have none); median and max are over those. Durations are "
          + "`end_to_end_duration`, nearest rank.";

  private static void checkpointRows(StringBuilder md, RunResult a, RunResult b) {
    CheckpointSummary ca = a.checkpoints();
    CheckpointSummary cb = b.checkpoints();
    row(
        md,
        "checkpoints completed (with bytes arrived)",
        ca.completed() + " (" + ca.withArrivals() + ")",
        cb.completed() + " (" + cb.withArrivals() + ")",
        "");
    row(
        md,
        "checkpointed bytes ÷ bytes arrived, per checkpoint: median / max",
        f2(ca.ratioMedian()) + " / " + f2(ca.ratioMax()),
        f2(cb.ratioMedian()) + " / " + f2(cb.ratioMax()),
        "median A/B = " + f2(ratio(ca.ratioMedian(), cb.ratioMedian())));
    row(
        md,
        "checkpoint duration p50 / p95",
        ms(ca.durationP50Ms()) + " / " + ms(ca.durationP95Ms()),
        ms(cb.durationP50Ms()) + " / " + ms(cb.durationP95Ms()),
        "p95 A/B = " + f2(ratio(ca.durationP95Ms(), cb.durationP95Ms())));
    row(
        md,
        "checkpointed in total: Flink state + staged (of bytes arrived)",
        checkpointed(ca),
        checkpointed(cb),
        "");
  }

  private String stagedNote() {
    boolean seen =
        liveA.checkpoints().stagedMetric() || (tputA != null && tputA.checkpoints().stagedMetric());
    return seen
        ? " A reported `spatialSink.stagedBytes`."
        : " **A did not report `spatialSink.stagedBytes`: its staged bytes are counted as 0.**";
  }

  private static String checkpointed(CheckpointSummary c) {
    return mb(c.checkpointedSizeBytes())
        + " + "
        + mb(c.stagedBytes())
        + " (of "
        + mb(c.arrivedBytes())
        + ")";
  }

  Map<String, Object> json() {
    Map<String, Object> j = new LinkedHashMap<>();
    j.put("when", Instant.now().toString());
    j.put("cores", Runtime.getRuntime().availableProcessors());
    j.put("settings", settings.asMap());
    j.put("liveExpectedRecords", expectedLive);
    j.put("liveProducedA", producedA);
    j.put("liveProducedB", producedB);
    j.put("liveCatchUpMsA", catchUpMs[0]);
    j.put("liveCatchUpMsB", catchUpMs[1]);
    j.put("liveA", liveA);
    j.put("liveB", liveB);
    j.put("throughputA", tputA);
    j.put("throughputB", tputB);
    Map<String, Object> ratios = new LinkedHashMap<>();
    if (tputA != null) {
      ratios.put("throughputRecordsPerSecondA", recordsPerSecond(tputA));
      ratios.put("throughputRecordsPerSecondB", recordsPerSecond(tputB));
      ratios.put("throughputAOverB", throughputRatio());
    }
    ratios.put("liveFilesBOverA", fileRatio());
    ratios.put("liveSnapshotsBOverA", ratio(liveB.snapshots(), liveA.snapshots()));
    ratios.put(
        "livePeakHeapSampledAOverB",
        ratio(liveA.peakHeapSampledBytes(), liveB.peakHeapSampledBytes()));
    ratios.put("liveCheckpointRatioMedianA", liveA.checkpoints().ratioMedian());
    ratios.put("liveCheckpointRatioMedianB", liveB.checkpoints().ratioMedian());
    ratios.put("liveCheckpointDurationP95MsA", liveA.checkpoints().durationP95Ms());
    ratios.put("liveCheckpointDurationP95MsB", liveB.checkpoints().durationP95Ms());
    ratios.put("goalFilesMet", fileRatio() >= GOAL_FILE_RATIO);
    if (tputA != null) {
      ratios.put("goalThroughputMet", throughputRatio() >= GOAL_THROUGHPUT_RATIO);
    }
    j.put("ratios", ratios);
    j.put("checkpointDefinitions", CHECKPOINT_DEFINITIONS);
    return j;
  }

  void write(Path dir) throws IOException {
    Files.writeString(dir.resolve("sink-benchmark.md"), markdown());
    new ObjectMapper()
        .writerWithDefaultPrettyPrinter()
        .writeValue(dir.resolve("sink-benchmark.json").toFile(), json());
  }

  private static void row(StringBuilder md, String label, String a, String b, String ratio) {
    md.append("| ")
        .append(label)
        .append(" | ")
        .append(a)
        .append(" | ")
        .append(b)
        .append(" | ")
        .append(ratio)
        .append(" |\n");
  }

  private static double ratio(double num, double den) {
    return den == 0 ? Double.NaN : num / den;
  }

  private static String produced(InputFeed.Produced p) {
    return String.format(
        Locale.ROOT, "%,d (%,.0f rec/s, %d ms)", p.records(), p.rate(), p.maxBehindMillis());
  }

  private static String sizes(RunResult r) {
    return mb(r.fileP10()) + " / " + mb(r.fileP50()) + " / " + mb(r.fileP90());
  }

  private static String heap(RunResult r) {
    return mb(r.peakHeapSampledBytes()) + " / " + mb(r.peakHeapAfterGcBytes());
  }

  private static String reasons(RunResult r) {
    if (r.closeReasons() == null || r.closeReasons().isEmpty()) {
      return "-";
    }
    StringBuilder sb = new StringBuilder();
    r.closeReasons()
        .forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append(' ').append(v));
    return sb.toString();
  }

  private static String mb(long bytes) {
    return String.format(Locale.ROOT, "%.2f MB", bytes / 1e6);
  }

  private static String ms(long millis) {
    return String.format(Locale.ROOT, "%,d ms", millis);
  }

  private static String secs(long millis) {
    return String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
  }

  private static String n(long v) {
    return String.format(Locale.ROOT, "%,d", v);
  }

  private static String f0(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }

  private static String f2(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }
}
