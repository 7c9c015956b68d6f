package org.spatialingest.tools;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;

/**
 * {@code inspect}: a summary of the table as the sink left it. Snapshot fields come from the sink's
 * summary keys (metadata only); file, row, partition and size figures come from the current
 * snapshot's manifests.
 */
public final class TableInspection {
  private TableInspection() {}

  public record Report(
      String table,
      String location,
      int formatVersion,
      String partitionSpec,
      Long currentSnapshotId,
      String lastCommit,
      Long lastCommitMs,
      Long timeSinceLastCommitMs,
      int snapshots,
      int sinkCommits,
      int dataFiles,
      long rows,
      long totalBytes,
      int partitions,
      SizeDistribution fileSizes,
      Long oldestKafkaTimestampMs,
      String oldestKafkaTimestamp,
      Long newestKafkaTimestampMs,
      String newestKafkaTimestamp,
      Map<String, Long> closedByReason,
      Double encodedPerBufferedRatio,
      List<SnapshotRow> snapshotList,
      List<PartitionRow> newestPartitions,
      List<SchemaRow> schemaHistory,
      List<PositionsRow> positions,
      List<PositionsEvent> positionEvents,
      @JsonIgnore long[] fileSizeList) {}

  /**
   * The newest positions of one sink ({@link TablePositions#readSink}): where it records them, the
   * Kafka cluster and topic ids they are of (null: an older release that did not know them), and
   * how many partitions they cover.
   */
  public record PositionsRow(
      String sink,
      long snapshotId,
      String kafkaCluster,
      Map<String, String> topicIds,
      int partitions,
      Map<String, Long> offsets) {}

  /**
   * A commit that recorded a reset of positions or records lost in Kafka (gaps; {@code
   * kafka.on-gap: continue}), newest first.
   */
  public record PositionsEvent(
      long snapshotId, String committed, String reset, String gaps, Long gapRecords) {}

  /**
   * Every sink's newest positions: the sinks with a tag, and the newest positions of the history.
   */
  public static List<PositionsRow> positions(Table table) {
    java.util.Set<String> sinks = new java.util.TreeSet<>();
    table.refs().keySet().stream()
        .filter(n -> n.startsWith(TablePositions.TAG_PREFIX))
        .map(n -> n.substring(TablePositions.TAG_PREFIX.length()))
        .forEach(sinks::add);
    List<PositionsRow> out = new ArrayList<>();
    if (table.currentSnapshot() == null) {
      return out;
    }
    if (sinks.isEmpty()) {
      // an older release: one sink, no id
      Map<String, Long> any = TablePositions.read(table);
      if (!any.isEmpty()) {
        out.add(
            new PositionsRow(
                null,
                table.currentSnapshot().snapshotId(),
                null,
                Map.of(),
                any.size(),
                new java.util.TreeMap<>(any)));
      }
      return out;
    }
    for (String sink : sinks) {
      TablePositions.readSink(table, sink)
          .ifPresent(
              p ->
                  out.add(
                      new PositionsRow(
                          sink,
                          p.snapshotId(),
                          p.ids().clusterId(),
                          p.ids().topicIds(),
                          p.offsets().size(),
                          new java.util.TreeMap<>(p.offsets()))));
    }
    return out;
  }

  /** Commits of the history that recorded a reset or a gap, newest first. */
  public static List<PositionsEvent> positionEvents(List<Snapshot> history) {
    List<PositionsEvent> out = new ArrayList<>();
    for (Snapshot s : history) {
      Map<String, String> m = s.summary() == null ? Map.of() : s.summary();
      String reset = m.get(SnapshotSummaryKeys.POSITIONS_RESET);
      String gaps = m.get(SnapshotSummaryKeys.GAPS);
      if (reset != null || gaps != null) {
        String lost = m.get(SnapshotSummaryKeys.GAP_RECORDS);
        out.add(
            new PositionsEvent(
                s.snapshotId(),
                Instant.ofEpochMilli(s.timestampMillis()).toString(),
                reset,
                gaps,
                lost == null ? null : Long.parseLong(lost)));
      }
    }
    return out;
  }

  /**
   * One schema of the table, oldest first: what changed from the one before (top-level columns,
   * matched by field id) and when the first snapshot written with it was committed (null if none
   * was: Iceberg records no time for a schema change itself).
   */
  public record SchemaRow(int schemaId, String firstCommit, List<String> changes) {}

  public static List<SchemaRow> schemaHistory(Table table) {
    Map<Integer, Long> first = new HashMap<>();
    for (Snapshot s : table.snapshots()) {
      if (s.schemaId() != null) {
        first.merge(s.schemaId(), s.timestampMillis(), Math::min);
      }
    }
    List<SchemaRow> out = new ArrayList<>();
    Schema before = null;
    for (int id : new java.util.TreeSet<>(table.schemas().keySet())) {
      Schema schema = table.schemas().get(id);
      Long at = first.get(id);
      out.add(
          new SchemaRow(
              id,
              at == null ? null : Instant.ofEpochMilli(at).toString(),
              before == null
                  ? List.of("created with " + schema.columns().size() + " columns")
                  : changes(before, schema)));
      before = schema;
    }
    return out;
  }

  static List<String> changes(Schema before, Schema after) {
    List<String> out = new ArrayList<>();
    for (Types.NestedField f : after.columns()) {
      Types.NestedField old = before.findField(f.fieldId());
      if (old == null) {
        out.add("added " + f.name() + ": " + f.type());
        continue;
      }
      if (!old.name().equals(f.name())) {
        out.add("renamed " + old.name() + " -> " + f.name());
      }
      if (!old.type().equals(f.type())) {
        out.add("changed " + f.name() + ": " + old.type() + " -> " + f.type());
      }
      if (old.isRequired() && f.isOptional()) {
        out.add("made " + f.name() + " optional");
      }
    }
    for (Types.NestedField old : before.columns()) {
      if (after.findField(old.fieldId()) == null) {
        out.add("dropped " + old.name());
      }
    }
    return out;
  }

  /** File sizes in bytes; percentiles interpolate between closest ranks. All 0 without files. */
  public record SizeDistribution(long min, long p10, long p50, long p90, long max, long mean) {
    static SizeDistribution of(long[] sizes) {
      if (sizes.length == 0) {
        return new SizeDistribution(0, 0, 0, 0, 0, 0);
      }
      long sum = 0;
      long min = Long.MAX_VALUE;
      long max = 0;
      for (long s : sizes) {
        sum += s;
        min = Math.min(min, s);
        max = Math.max(max, s);
      }
      return new SizeDistribution(
          min,
          Math.round(Stats.percentile(sizes, 0.1)),
          Math.round(Stats.median(sizes)),
          Math.round(Stats.percentile(sizes, 0.9)),
          max,
          Math.round(sum / (double) sizes.length));
    }
  }

  /** One snapshot; the sink fields are null for snapshots the sink did not write. */
  public record SnapshotRow(
      long snapshotId,
      String committedAt,
      long timestampMs,
      String operation,
      boolean sink,
      Long addedRecords,
      Long addedFiles,
      Long rows,
      Long files,
      Long fileBytes,
      Long bufferedBytes,
      Long minIngestMs,
      Long maxIngestMs,
      Map<String, Long> closedByReason,
      Long checkpointId,
      String flinkJobId,
      Long maxAgeAtCommitMs,
      Long minAgeAtCommitMs) {}

  public record PartitionRow(
      String partition, int files, long rows, long bytes, long medianFileBytes) {}

  public static Report inspect(Table table, String name, int limit, long nowMillis) {
    List<Snapshot> history = SinkCommit.history(table);
    List<SinkCommit> commits = new ArrayList<>();
    List<SnapshotRow> rows = new ArrayList<>();
    Long oldest = null;
    Long newest = null;
    long fileBytes = 0;
    long bufferedBytes = 0;
    for (Snapshot s : history) {
      SinkCommit c = SinkCommit.of(s).orElse(null);
      if (c != null) {
        commits.add(c);
        if (c.minIngestMillis() != null) {
          oldest = oldest == null ? c.minIngestMillis() : Math.min(oldest, c.minIngestMillis());
        }
        if (c.maxIngestMillis() != null) {
          newest = newest == null ? c.maxIngestMillis() : Math.max(newest, c.maxIngestMillis());
        }
        if (c.fileBytes() != null && c.bufferedBytes() != null) {
          fileBytes += c.fileBytes();
          bufferedBytes += c.bufferedBytes();
        }
      }
      if (rows.size() < limit) {
        rows.add(row(s, c));
      }
    }

    Map<String, List<Long>> sizesByPartition = new HashMap<>();
    Map<String, Long> startByPartition = new HashMap<>();
    Map<String, Long> rowsByPartition = new HashMap<>();
    List<Long> sizes = new ArrayList<>();
    long totalRows = 0;
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask task : tasks) {
          DataFile f = task.file();
          PartitionSpec spec = table.specs().get(f.specId());
          String label =
              spec.isUnpartitioned()
                  ? "(unpartitioned)"
                  : PartitionFilter.label(spec, f.partition());
          sizes.add(f.fileSizeInBytes());
          totalRows += f.recordCount();
          sizesByPartition.computeIfAbsent(label, k -> new ArrayList<>()).add(f.fileSizeInBytes());
          rowsByPartition.merge(label, f.recordCount(), Long::sum);
          startByPartition.putIfAbsent(label, PartitionFilter.startMillis(spec, f.partition()));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    long[] all = sizes.stream().mapToLong(Long::longValue).toArray();
    List<PartitionRow> partitions = new ArrayList<>();
    sizesByPartition.forEach(
        (label, list) -> {
          long[] s = list.stream().mapToLong(Long::longValue).toArray();
          partitions.add(
              new PartitionRow(
                  label,
                  s.length,
                  rowsByPartition.get(label),
                  list.stream().mapToLong(Long::longValue).sum(),
                  Math.round(Stats.median(s))));
        });
    partitions.sort(
        Comparator.<PartitionRow>comparingLong(p -> startByPartition.get(p.partition()))
            .thenComparing(PartitionRow::partition)
            .reversed());

    Snapshot current = table.currentSnapshot();
    return new Report(
        name,
        table.location(),
        formatVersion(table),
        table.spec().toString().replaceAll("\\s+", " "),
        current == null ? null : current.snapshotId(),
        current == null ? null : Instant.ofEpochMilli(current.timestampMillis()).toString(),
        current == null ? null : current.timestampMillis(),
        current == null ? null : nowMillis - current.timestampMillis(),
        history.size(),
        commits.size(),
        all.length,
        totalRows,
        sizes.stream().mapToLong(Long::longValue).sum(),
        sizesByPartition.size(),
        SizeDistribution.of(all),
        oldest,
        oldest == null ? null : Instant.ofEpochMilli(oldest).toString(),
        newest,
        newest == null ? null : Instant.ofEpochMilli(newest).toString(),
        SinkCommit.sumClosed(commits),
        bufferedBytes > 0 ? Math.round(fileBytes * 1000.0 / bufferedBytes) / 1000.0 : null,
        rows,
        partitions.subList(0, Math.min(limit, partitions.size())),
        schemaHistory(table),
        positions(table),
        positionEvents(history),
        all);
  }

  private static SnapshotRow row(Snapshot s, SinkCommit c) {
    Map<String, String> summary = s.summary() == null ? Map.of() : s.summary();
    return new SnapshotRow(
        s.snapshotId(),
        Instant.ofEpochMilli(s.timestampMillis()).toString(),
        s.timestampMillis(),
        s.operation(),
        c != null,
        parse(summary.get(SnapshotSummary.ADDED_RECORDS_PROP)),
        parse(summary.get(SnapshotSummary.ADDED_FILES_PROP)),
        c == null ? null : c.rows(),
        c == null ? null : c.files(),
        c == null ? null : c.fileBytes(),
        c == null ? null : c.bufferedBytes(),
        c == null ? null : c.minIngestMillis(),
        c == null ? null : c.maxIngestMillis(),
        c == null ? null : c.closedByReason(),
        c == null ? null : c.checkpointId(),
        c == null ? null : c.flinkJobId(),
        c == null ? null : c.maxAgeAtCommitMillis(),
        c == null ? null : c.minAgeAtCommitMillis());
  }

  private static int formatVersion(Table table) {
    if (table instanceof HasTableOperations ops) {
      return ops.operations().current().formatVersion();
    }
    return -1;
  }

  private static Long parse(String v) {
    try {
      return v == null ? null : Long.parseLong(v);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
