package org.spatialingest.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.spatialingest.config.JobConfig;
import org.spatialingest.tools.InspectionPage;
import org.spatialingest.tools.TableAccess;
import org.spatialingest.tools.TableInspection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code inspect}: what the sink has committed, from snapshot summaries and the current manifests.
 */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Summarize the table: snapshots with the sink's summary fields (rows, files, bytes, ingest time range, close"
          + " reasons, checkpoint id, age at commit), data files, partitions, rows, file size distribution, time"
          + " since the last commit, oldest and newest Kafka timestamp committed."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:summary printed",
      "2:bad flag, bad config or no such table",
      "3:runtime failure"
    })
final class InspectCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin CatalogOptions catalog;

  @Option(
      names = "--table",
      paramLabel = "NS.TABLE",
      description = "Table; default table.namespace.table.name.")
  String table;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "20",
      description =
          "Snapshots (newest first) and partitions (newest first) to list. Default: ${DEFAULT-VALUE}.")
  int limit;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Option(
      names = "--html",
      paramLabel = "FILE",
      description =
          "Also write one self-contained HTML page to FILE: file-size histogram against T, rows and files"
              + " per commit, age at commit against L + C, close reasons (every retained snapshot; T, L, C from the"
              + " job configuration).")
  Path html;

  /** Injected for tests. */
  Clock clock = Clock.systemUTC();

  @Override
  public Integer call() throws IOException {
    if (limit < 0) {
      throw new ParameterException(spec.commandLine(), "--limit must be >= 0, was " + limit);
    }
    JobConfig config = catalog.jobConfig(table);
    TableInspection.Report r;
    TableInspection.Report all = null;
    try (TableAccess access = TableAccess.open(config)) {
      r = TableInspection.inspect(access.table(), access.id().toString(), limit, clock.millis());
      if (html != null) {
        all =
            TableInspection.inspect(
                access.table(), access.id().toString(), Integer.MAX_VALUE, clock.millis());
      }
    }
    if (all != null) {
      Files.writeString(html, InspectionPage.html(all, config.sizingBounds()));
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(
          new ObjectMapper()
              .enable(SerializationFeature.INDENT_OUTPUT)
              .setSerializationInclusion(JsonInclude.Include.NON_NULL)
              .writeValueAsString(r));
    } else {
      print(out, r);
    }
    out.flush();
    return Main.EXIT_OK;
  }

  private static void print(PrintWriter out, TableInspection.Report r) {
    out.printf(
        Locale.ROOT, "table                  %s (format v%d)%n", r.table(), r.formatVersion());
    out.printf(Locale.ROOT, "location               %s%n", r.location());
    out.printf(Locale.ROOT, "partition spec         %s%n", r.partitionSpec());
    if (r.currentSnapshotId() == null) {
      out.println("no snapshots yet");
      return;
    }
    out.printf(
        Locale.ROOT,
        "last commit            %s (%s ago)%n",
        r.lastCommit(),
        age(r.timeSinceLastCommitMs()));
    out.printf(
        Locale.ROOT,
        "snapshots              %d (%d by the sink)%n",
        r.snapshots(),
        r.sinkCommits());
    out.printf(
        Locale.ROOT,
        "data files             %d in %d partitions, %d rows, %d bytes%n",
        r.dataFiles(),
        r.partitions(),
        r.rows(),
        r.totalBytes());
    TableInspection.SizeDistribution d = r.fileSizes();
    out.printf(
        Locale.ROOT,
        "file size              min %s  p10 %s  p50 %s  p90 %s  max %s  mean %s%n",
        mb(d.min()),
        mb(d.p10()),
        mb(d.p50()),
        mb(d.p90()),
        mb(d.max()),
        mb(d.mean()));
    out.printf(
        Locale.ROOT,
        "kafka timestamps       oldest %s, newest %s%n",
        r.oldestKafkaTimestamp(),
        r.newestKafkaTimestamp());
    out.printf(Locale.ROOT, "encoded/buffered       %s%n", r.encodedPerBufferedRatio());
    out.print("closed by reason       ");
    r.closedByReason().forEach((k, v) -> out.print(k + "=" + v + " "));
    out.println();
    out.println();
    out.printf(Locale.ROOT, "%-8s %-24s %s%n", "schema", "first commit", "changes");
    for (TableInspection.SchemaRow s : r.schemaHistory()) {
      out.printf(
          Locale.ROOT,
          "%-8d %-24s %s%n",
          s.schemaId(),
          str(s.firstCommit()),
          String.join("; ", s.changes()));
    }
    out.println();
    out.printf(
        Locale.ROOT,
        "%-20s %-24s %-9s %10s %6s %12s %8s %10s %10s  %s%n",
        "snapshot",
        "committed at",
        "op",
        "rows",
        "files",
        "bytes",
        "ckpt",
        "max age",
        "min age",
        "closed");
    for (TableInspection.SnapshotRow s : r.snapshotList()) {
      out.printf(
          Locale.ROOT,
          "%-20d %-24s %-9s %10s %6s %12s %8s %10s %10s  %s%n",
          s.snapshotId(),
          s.committedAt(),
          s.operation(),
          str(s.sink() ? s.rows() : s.addedRecords()),
          str(s.sink() ? s.files() : s.addedFiles()),
          str(s.fileBytes()),
          str(s.checkpointId()),
          age(s.maxAgeAtCommitMs()),
          age(s.minAgeAtCommitMs()),
          s.closedByReason() == null ? "(not the sink)" : s.closedByReason());
    }
    out.println();
    out.printf(
        Locale.ROOT,
        "%-24s %-22s %-24s %s%n",
        "positions of sink",
        "snapshot",
        "kafka cluster",
        "topics (id): partitions");
    for (TableInspection.PositionsRow p : r.positions()) {
      out.printf(
          Locale.ROOT,
          "%-24s %-22d %-24s %s%n",
          p.sink() == null ? "(any, older release)" : p.sink(),
          p.snapshotId(),
          p.kafkaCluster() == null ? "(unknown)" : p.kafkaCluster(),
          p.offsets().keySet().stream()
                  .map(k -> k.substring(0, k.lastIndexOf('/')))
                  .distinct()
                  .map(t -> t + " (" + p.topicIds().getOrDefault(t, "id unknown") + ")")
                  .toList()
              + ": "
              + p.partitions());
    }
    for (TableInspection.PositionsEvent e : r.positionEvents()) {
      if (e.gaps() != null) {
        out.printf(
            Locale.ROOT,
            "GAP in Kafka, committed past by snapshot %d at %s: %d records lost: %s%n",
            e.snapshotId(),
            e.committed(),
            e.gapRecords() == null ? -1 : e.gapRecords(),
            e.gaps());
      }
      if (e.reset() != null) {
        out.printf(
            Locale.ROOT,
            "positions reset by snapshot %d at %s: %s%n",
            e.snapshotId(),
            e.committed(),
            e.reset());
      }
    }
    out.println();
    out.printf(
        Locale.ROOT, "%-40s %6s %12s %14s %12s%n", "partition", "files", "rows", "bytes", "median");
    for (TableInspection.PartitionRow p : r.newestPartitions()) {
      out.printf(
          Locale.ROOT,
          "%-40s %6d %12d %14d %12s%n",
          p.partition(),
          p.files(),
          p.rows(),
          p.bytes(),
          mb(p.medianFileBytes()));
    }
  }

  private static String str(Object o) {
    return o == null ? "-" : o.toString();
  }

  private static String mb(long bytes) {
    return String.format(Locale.ROOT, "%.3fMB", bytes / 1e6);
  }

  private static String age(Long ms) {
    if (ms == null) {
      return "-";
    }
    return ms < 10_000
        ? ms + "ms"
        : ms < 3_600_000
            ? String.format(Locale.ROOT, "%.1fs", ms / 1000.0)
            : String.format(Locale.ROOT, "%.1fh", ms / 3_600_000.0);
  }
}
