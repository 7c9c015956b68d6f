package org.spatialingest.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import org.spatialingest.sizing.IcebergSplitPlanning;
import org.spatialingest.sizing.ScanInput;
import org.spatialingest.sizing.SizesFile;
import org.spatialingest.sizing.SparkFilePacking;
import org.spatialingest.sizing.TaskEstimate;
import org.spatialingest.tools.PartitionFilter;
import org.spatialingest.tools.TableAccess;
import org.spatialingest.tools.TableTaskPlanning;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code estimate-tasks}: how many read tasks Spark or Iceberg would plan for a set of files. The
 * math is {@link SparkFilePacking} and {@link IcebergSplitPlanning}; this class reads the input and
 * prints.
 */
@Command(
    name = "estimate-tasks",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Estimate the read tasks a scan of the given files makes.",
      "spark: Spark SQL file-source planning (FilePartition.maxSplitBytes, PartitionedFileUtil.splitFiles,"
          + " FilePartition.getFilePartitions). --default-parallelism stands for spark.sql.files.minPartitionNum,"
          + " which defaults to spark.sql.leafNodeDefaultParallelism, then spark.default.parallelism; without it"
          + " maxSplitBytes = --max-partition-bytes. spark.sql.files.maxPartitionNum is not modelled.",
      "iceberg: Iceberg scan planning (split at read.split.target-size, or at recorded row-group offsets;"
          + " lookback bin packing, weight max(length, open cost)). --max-partition-bytes is read.split.target-size,"
          + " --open-cost read.split.open-file-cost; --default-parallelism applies the Spark reader's adaptive split"
          + " size."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:estimate printed",
      "2:bad flag, bad sizes file (the message names the line), bad config or no such table",
      "3:runtime failure"
    })
public final class EstimateTasksCommand implements Callable<Integer> {

  public enum Engine {
    spark,
    iceberg
  }

  /** Where file sizes come from; exactly one. */
  static final class InputSource {
    @Option(
        names = "--sizes",
        paramLabel = "FILE",
        description =
            "One file size in bytes per line, or an object-store listing whose 'Content-Length: N' lines"
                + " give the sizes (other lines ignored). Blank lines are skipped.")
    Path sizes;

    @Option(
        names = "--table",
        paramLabel = "NS.TABLE",
        description =
            "An Iceberg table (located with --config/--set like `run`): sizes and split offsets (row-group"
                + " starts) of the current snapshot's data files. With --engine iceberg, Iceberg's own planTasks() count"
                + " is printed next to the estimate.")
    String table;
  }

  @Spec CommandSpec spec;

  @Mixin CatalogOptions catalog;

  @Option(
      names = "--partition",
      paramLabel = "KEY=VALUE",
      description =
          "With --table: only this partition (day=2026-11-29, hour=2026-11-29-10 or FIELD=VALUE).")
  String partition;

  @Option(
      names = "--engine",
      required = true,
      paramLabel = "ENGINE",
      description = "spark or iceberg.")
  Engine engine;

  @ArgGroup(exclusive = true, multiplicity = "1")
  InputSource input;

  @Option(
      names = "--max-partition-bytes",
      paramLabel = "SIZE",
      defaultValue = "128MiB",
      converter = CliConverters.SizeConverter.class,
      description =
          "spark.sql.files.maxPartitionBytes / read.split.target-size. Default: ${DEFAULT-VALUE}.")
  long maxPartitionBytes;

  @Option(
      names = "--open-cost",
      paramLabel = "SIZE",
      defaultValue = "4MiB",
      converter = CliConverters.SizeConverter.class,
      description =
          "spark.sql.files.openCostInBytes / read.split.open-file-cost. Default: ${DEFAULT-VALUE}.")
  long openCost;

  @Option(
      names = "--default-parallelism",
      paramLabel = "P",
      description =
          "Spark's minPartitionNum (spark: lowers maxSplitBytes toward total/P; iceberg: adaptive split"
              + " size).")
  Integer defaultParallelism;

  @Option(
      names = "--lookback",
      paramLabel = "N",
      defaultValue = "10",
      description = "iceberg only: read.split.planning-lookback. Default: ${DEFAULT-VALUE}.")
  int lookback;

  @Option(
      names = "--slots",
      paramLabel = "N",
      description = "Concurrent task slots; adds waves = ceil(tasks / N).")
  Integer slots;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    if (maxPartitionBytes <= 0) {
      throw usage("--max-partition-bytes must be > 0");
    }
    if (openCost < 0) {
      throw usage("--open-cost must be >= 0");
    }
    if (defaultParallelism != null && defaultParallelism < 1) {
      throw usage("--default-parallelism must be >= 1, was " + defaultParallelism);
    }
    if (slots != null && slots < 1) {
      throw usage("--slots must be >= 1, was " + slots);
    }
    if (lookback < 1) {
      throw usage("--lookback must be >= 1, was " + lookback);
    }
    if (input.table == null
        && (partition != null || catalog.config != null || !catalog.overrides.isEmpty())) {
      throw usage("--partition, --config and --set apply only with --table");
    }
    ScanInput scan = loadInput();
    OptionalInt parallelism =
        defaultParallelism == null ? OptionalInt.empty() : OptionalInt.of(defaultParallelism);
    OptionalInt slotCount = slots == null ? OptionalInt.empty() : OptionalInt.of(slots);
    TaskEstimate est =
        switch (engine) {
          case spark ->
              SparkFilePacking.estimate(scan, maxPartitionBytes, openCost, parallelism, slotCount);
          case iceberg ->
              IcebergSplitPlanning.estimate(
                  scan, maxPartitionBytes, openCost, lookback, parallelism, slotCount);
        };
    Integer icebergTasks = null;
    if (input.table != null && engine == Engine.iceberg) {
      try (TableAccess access = TableAccess.open(catalog.jobConfig(input.table))) {
        icebergTasks =
            TableTaskPlanning.icebergPlannedTasks(
                access.table(), partitionFilter(), est.maxSplitBytes(), lookback, openCost);
      }
    }
    PrintWriter out = spec.commandLine().getOut();
    List<String> notes = notes(est, scan);
    if (json) {
      ObjectNode node = toJson(est);
      if (input.table != null) {
        node.put("table", input.table);
        if (partition != null) {
          node.put("partition", partition);
        }
        node.put("filesWithSplitOffsets", filesWithUsableOffsets(scan));
      }
      if (icebergTasks != null) {
        node.put("icebergPlannedTasks", icebergTasks);
      }
      out.println(
          new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(node));
      PrintWriter err = spec.commandLine().getErr();
      notes.forEach(n -> err.println("note: " + n));
      err.flush();
    } else {
      printText(out, est);
      if (input.table != null) {
        out.printf(
            Locale.ROOT,
            "table                %s%s, %d of %d files with row-group split offsets%n",
            input.table,
            partition == null ? "" : " (" + partition + ")",
            filesWithUsableOffsets(scan),
            scan.fileCount());
      }
      if (icebergTasks != null) {
        out.printf(
            Locale.ROOT,
            "iceberg planTasks    %d (table.newScan().planTasks(), same split size, lookback and"
                + " open cost)%n",
            icebergTasks);
      }
      notes.forEach(n -> out.println("note: " + n));
    }
    out.flush();
    return Main.EXIT_OK;
  }

  /**
   * The files to plan. A table-backed input (sizes and split offsets from manifests) returns its
   * own here.
   */
  ScanInput loadInput() throws IOException {
    if (input.table != null) {
      try (TableAccess access = TableAccess.open(catalog.jobConfig(input.table))) {
        return TableTaskPlanning.scanInput(access.table(), partitionFilter());
      }
    }
    Path file = input.sizes;
    if (!Files.isRegularFile(file)) {
      throw usage("--sizes: " + file + " does not exist or is not a file");
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (MalformedInputException e) {
      throw usage("--sizes: " + file + " is not UTF-8 text");
    }
    List<Long> sizes;
    try {
      sizes = SizesFile.parse(lines);
    } catch (SizesFile.BadLineException e) {
      throw usage("--sizes: " + file + ": " + e.getMessage());
    }
    if (sizes.isEmpty()) {
      throw usage("--sizes: " + file + " lists no file sizes");
    }
    return ScanInput.ofSizes(sizes);
  }

  private PartitionFilter partitionFilter() {
    return partition == null ? null : PartitionFilter.parse(partition);
  }

  private static int filesWithUsableOffsets(ScanInput scan) {
    int n = 0;
    for (int f = 0; f < scan.fileCount(); f++) {
      if (IcebergSplitPlanning.usableOffsets(scan.splitOffsets(f), scan.size(f))) {
        n++;
      }
    }
    return n;
  }

  private List<String> notes(TaskEstimate est, ScanInput scan) {
    List<String> notes = new ArrayList<>();
    if (engine == Engine.spark && defaultParallelism == null) {
      notes.add(
          "no --default-parallelism: maxSplitBytes = maxPartitionBytes (Spark lowers it toward"
              + " planningBytes / parallelism when that is smaller)");
    }
    if (engine == Engine.spark
        && defaultParallelism != null
        && est.maxSplitBytes() < est.maxPartitionBytes()) {
      notes.add(
          "maxSplitBytes lowered by parallelism "
              + defaultParallelism
              + ": planningBytes / parallelism = "
              + est.planningBytes() / defaultParallelism);
    }
    if (engine == Engine.iceberg
        && defaultParallelism != null
        && est.maxSplitBytes() != est.maxPartitionBytes()) {
      notes.add(
          "adaptive split size: "
              + est.maxSplitBytes()
              + " bytes for parallelism "
              + defaultParallelism);
    }
    if (engine == Engine.iceberg && input.table == null) {
      notes.add(
          "no split offsets in a sizes file: files are cut at the split size, not at row groups");
    }
    if (input.table != null && scan.fileCount() == 0) {
      notes.add(
          "the table's current snapshot has no data files"
              + (partition == null ? "" : " in " + partition));
    }
    return notes;
  }

  private static ObjectNode toJson(TaskEstimate e) {
    ObjectNode o = new ObjectMapper().createObjectNode();
    o.put("engine", e.engine());
    o.put("inputFiles", e.inputFiles());
    o.put("totalBytes", e.totalBytes());
    o.put("totalMiB", round3(e.totalMiB()));
    o.put("maxPartitionBytes", e.maxPartitionBytes());
    o.put("maxSplitBytes", e.maxSplitBytes());
    o.put("openCost", e.openCost());
    o.put("planningBytes", e.planningBytes());
    o.put("estimatedTasks", e.estimatedTasks());
    o.put("avgTaskBytes", Math.round(e.avgTaskBytes()));
    o.put("minTaskBytes", e.minTaskBytes());
    o.put("maxTaskBytes", e.maxTaskBytes());
    o.put("avgChunksPerTask", round3(e.avgChunksPerTask()));
    o.put("minChunksPerTask", e.minChunksPerTask());
    o.put("maxChunksPerTask", e.maxChunksPerTask());
    if (e.waves().isPresent()) {
      o.put("waves", e.waves().getAsInt());
    }
    return o;
  }

  private static void printText(PrintWriter out, TaskEstimate e) {
    out.printf(Locale.ROOT, "engine               %s%n", e.engine());
    out.printf(Locale.ROOT, "input files          %d%n", e.inputFiles());
    out.printf(Locale.ROOT, "total bytes          %d (%.3f MiB)%n", e.totalBytes(), e.totalMiB());
    out.printf(Locale.ROOT, "max partition bytes  %d%n", e.maxPartitionBytes());
    out.printf(Locale.ROOT, "max split bytes      %d%n", e.maxSplitBytes());
    out.printf(Locale.ROOT, "open cost            %d%n", e.openCost());
    out.printf(Locale.ROOT, "planning bytes       %d%n", e.planningBytes());
    out.printf(Locale.ROOT, "estimated tasks      %d%n", e.estimatedTasks());
    out.printf(
        Locale.ROOT,
        "task bytes           avg %d, min %d, max %d%n",
        Math.round(e.avgTaskBytes()),
        e.minTaskBytes(),
        e.maxTaskBytes());
    out.printf(
        Locale.ROOT,
        "chunks per task      avg %.3f, min %d, max %d%n",
        e.avgChunksPerTask(),
        e.minChunksPerTask(),
        e.maxChunksPerTask());
    if (e.waves().isPresent()) {
      out.printf(
          Locale.ROOT,
          "waves                %d (%d slots)%n",
          e.waves().getAsInt(),
          e.slots().getAsInt());
    }
  }

  private static double round3(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
