package org.spatialingest.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.spatialingest.config.JobConfig;
import org.spatialingest.tools.PartitionFilter;
import org.spatialingest.tools.PartitionVerification;
import org.spatialingest.tools.TableAccess;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code verify}: are the sink's files in a partition the size the plan expected? */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Compare the median size of the data files the sink wrote to a partition (the newest, or --partition) with"
          + " the planned file size, before any compaction: the files the sink's own commits added.",
      "Prints file count, a size histogram, sink snapshots per hour and the close reasons summed from the snapshot"
          + " summaries (spatial-ingest.closed.<reason>)."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:median within tolerance",
      "1:median outside tolerance",
      "2:bad flag, bad config, no such table or no sink files in the partition",
      "3:runtime failure"
    })
final class VerifyCommand implements Callable<Integer> {

  static final class Expected {
    @Option(
        names = "--expected-mb",
        paramLabel = "MB",
        description = "Planned file size, decimal MB.")
    Double expectedMb;

    @Option(
        names = "--plan",
        paramLabel = "DIR",
        description =
            "Directory written by `plan --write-derivation` (or its derivation.json): expectedFileMb.")
    Path plan;
  }

  @Spec CommandSpec spec;

  @Mixin CatalogOptions catalog;

  @Option(
      names = "--table",
      paramLabel = "NS.TABLE",
      description = "Table; default table.namespace.table.name.")
  String table;

  @Option(
      names = "--partition",
      paramLabel = "KEY=VALUE",
      description =
          "day=2026-11-29, hour=2026-11-29-10 or FIELD=VALUE. Default: the newest partition.")
  String partition;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Expected expected;

  @Option(
      names = "--tolerance",
      paramLabel = "X",
      defaultValue = "2",
      description = "Within when expected/X <= median <= expected*X. Default: ${DEFAULT-VALUE}.")
  double tolerance;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    if (!(tolerance >= 1) || !Double.isFinite(tolerance)) {
      throw usage("--tolerance must be >= 1, was " + tolerance);
    }
    double expectedMb;
    String expectedSource;
    if (expected.plan != null) {
      Path file =
          Files.isDirectory(expected.plan)
              ? expected.plan.resolve("derivation.json")
              : expected.plan;
      if (!Files.isRegularFile(file)) {
        throw usage(
            "--plan: " + file + " does not exist (write it with plan --write-derivation DIR)");
      }
      JsonNode d;
      try {
        d = new ObjectMapper().readTree(file.toFile());
      } catch (IOException e) {
        throw usage("--plan: " + file + " is not JSON: " + e.getMessage());
      }
      JsonNode mb = d.path("outputs").path("expectedFileMb");
      if (!mb.isNumber()) {
        throw usage("--plan: " + file + " has no outputs.expectedFileMb");
      }
      expectedMb = mb.asDouble();
      expectedSource = "plan:" + file;
    } else {
      expectedMb = expected.expectedMb;
      expectedSource = "flag";
    }
    if (!(expectedMb > 0) || !Double.isFinite(expectedMb)) {
      throw usage("the expected file size must be > 0 MB, was " + expectedMb);
    }
    PartitionFilter filter = partition == null ? null : PartitionFilter.parse(partition);
    JobConfig config = catalog.jobConfig(table);
    PartitionVerification.Report report;
    try (TableAccess access = TableAccess.open(config)) {
      report =
          PartitionVerification.verify(
              access.table(),
              access.id().toString(),
              filter,
              Math.round(expectedMb * 1e6),
              expectedSource,
              tolerance);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      ObjectMapper mapper =
          new ObjectMapper()
              .enable(SerializationFeature.INDENT_OUTPUT)
              .setSerializationInclusion(JsonInclude.Include.NON_NULL);
      ObjectNode node = mapper.valueToTree(report);
      out.println(mapper.writeValueAsString(node));
    } else {
      print(out, report);
    }
    out.flush();
    return report.withinTolerance() ? Main.EXIT_OK : Main.EXIT_CHECK_FAILED;
  }

  private static void print(PrintWriter out, PartitionVerification.Report r) {
    out.printf(Locale.ROOT, "table                %s%n", r.table());
    out.printf(
        Locale.ROOT, "partition            %s (%s)%n", r.partition(), r.partitionSelection());
    out.printf(
        Locale.ROOT,
        "files                %d (%d rows, %d bytes), from %d sink commits%n",
        r.files(),
        r.rows(),
        r.bytes(),
        r.sinkCommits());
    out.printf(Locale.ROOT, "median file          %.3f MB%n", r.medianFileMb());
    out.printf(
        Locale.ROOT, "expected file        %.3f MB (%s)%n", r.expectedFileMb(), r.expectedSource());
    out.printf(
        Locale.ROOT,
        "ratio                %.3g (tolerance %sx) -> %s%n",
        r.ratio(),
        fmt(r.tolerance()),
        r.withinTolerance() ? "OK" : "OUTSIDE TOLERANCE");
    out.println("size histogram (x expected):");
    for (PartitionVerification.Bucket b : r.histogram()) {
      out.printf(
          Locale.ROOT,
          "  %-14s %-26s %d%n",
          b.range(),
          "[" + mb(b.fromBytes()) + ", " + (b.toBytes() == null ? "inf" : mb(b.toBytes())) + ")",
          b.files());
    }
    out.printf(Locale.ROOT, "snapshots per hour   %.3f%n", r.snapshotsPerHour());
    r.snapshotsByHour().forEach((h, n) -> out.printf(Locale.ROOT, "  %s  %d%n", h, n));
    out.println("closed by reason (sum over those commits):");
    r.closedByReason().forEach((k, v) -> out.printf(Locale.ROOT, "  %-16s %d%n", k, v));
    out.println();
    out.println(r.explanation());
  }

  private static String mb(long bytes) {
    return String.format(Locale.ROOT, "%.3f MB", bytes / 1e6);
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
