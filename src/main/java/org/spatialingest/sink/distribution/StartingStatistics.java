package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.flink.RowDataWrapper;
import org.spatialingest.sink.write.BufferedRowSize;
import org.spatialingest.sizing.SizingBounds;

/**
 * The statistics a {@link RangeCoordinator} starts from when the job's input is bounded: a sample
 * of the whole input's rows, read and parsed where the job is built, folded in as one {@link
 * SubtaskReport} (as if one subtask had routed it), so the first rows already go by the boundaries
 * of the whole input instead of waiting for an early merge of the first second's rows, which a
 * backfill of files sorted by time or by area misrepresents.
 *
 * <p>The report stands for the whole input: each partition's rows and bytes are the sample's scaled
 * by the input's records per sampled record, and they came in within one L. So a partition's range
 * count is what its whole input fills files of T with, as if it were read within L: an upper bound
 * (a partition brings no more per L than all it has), capped as always by what the writers can hold
 * open; it stays the partition's bound ({@code PartitionStatistics.maxRanges}) when the
 * checkpoints' merges measure the rate the files are read at. Its keys weigh as the rows of the
 * whole input, so a checkpoint's merge of what the subtasks read since (a few files, perhaps of one
 * area) refines the boundaries but does not swing them. Ingest times are those of the sample's
 * reading, as a file source's rows carry theirs: no backlog. Region enrichment comes after the
 * transform, so with {@code regions.partition} the sampled rows all fall in the partitions without
 * a region; the others are cut from the table's quantiles until a merge has seen them, as any
 * partition new to the coordinator.
 */
final class StartingStatistics {
  /**
   * Sampled rows a partition needs to start with boundaries of its own; one with fewer (a backfill
   * of many days or hours) is cut from the table's quantiles, as a partition the coordinator has
   * not seen yet. So of a sample of 4,096 rows at most 64 partitions travel in the job graph, 8 KB
   * of quantiles each.
   */
  static final int MIN_PARTITION_ROWS = 64;

  private StartingStatistics() {}

  /**
   * The coordinator's starting statistics, versioned as its checkpoint ({@link
   * RangeStatisticsSerializer}), or null when no placement is ranged or no row has a key.
   *
   * @param rows sampled rows of the ranged table, as the transform makes them
   * @param rowsPerSampledRow the input's rows per sampled row
   */
  static byte[] of(
      List<? extends RowData> rows,
      double rowsPerSampledRow,
      List<TablePlacement.Table> placements,
      SizingBounds bounds,
      int writers,
      int maxOpenPartitions,
      double seedRatio,
      long nowMillis)
      throws IOException {
    int ranged = -1;
    for (int i = 0; i < placements.size() && ranged < 0; i++) {
      if (placements.get(i).ranged() && placements.get(i).layout().sortKeyField() >= 0) {
        ranged = i;
      }
    }
    if (ranged < 0 || rows.isEmpty()) {
      return null;
    }
    TablePlacement.Table placement = placements.get(ranged);
    PartitionKey partitionKey = new PartitionKey(placement.spec(), placement.writeSchema());
    RowDataWrapper wrapper =
        new RowDataWrapper(placement.layout().rowType(), placement.writeSchema().asStruct());
    BufferedRowSize size = new BufferedRowSize(placement.layout());
    int sortKey = placement.layout().sortKeyField();
    Map<String, Sampled> partitions = new TreeMap<>();
    for (RowData row : rows) {
      partitionKey.partition(wrapper.wrap(row));
      Sampled p =
          partitions.computeIfAbsent(
              placement.spec().partitionToPath(partitionKey), k -> new Sampled());
      p.keys.add(row.getLong(sortKey));
      p.bytes += size.measure(row);
      p.newestIngestMillis = Math.max(p.newestIngestMillis, placement.layout().ingestMillis(row));
    }
    List<SubtaskReport.PartitionSample> samples = new ArrayList<>();
    partitions.forEach(
        (path, p) ->
            samples.add(
                new SubtaskReport.PartitionSample(
                    path,
                    Math.round(p.keys.size() * rowsPerSampledRow),
                    Math.round(p.bytes * rowsPerSampledRow),
                    p.newestIngestMillis,
                    p.keys.stream().mapToLong(Long::longValue).toArray())));
    List<List<SubtaskReport.PartitionSample>> tables = new ArrayList<>();
    for (int i = 0; i < placements.size(); i++) {
      tables.add(i == ranged ? samples : List.of());
    }
    double withinLatency = bounds.maxLatency().toMillis() / 1000.0;
    RangeStatistics statistics = new RangeStatistics(bounds, writers, maxOpenPartitions, seedRatio);
    statistics.merge(List.of(new SubtaskReport(0, withinLatency, 0, tables)), nowMillis);
    statistics
        .tables()
        .get(ranged)
        .partitions
        .keySet()
        .removeIf(path -> partitions.get(path).keys.size() < MIN_PARTITION_ROWS);
    // what the whole input fills is the most a partition asks for later, however fast it is read
    statistics.tables().get(ranged).partitions.values().forEach(p -> p.maxRanges = p.load.ranges);
    if (!statistics.hasKeys()) {
      return null;
    }
    return SimpleVersionedSerialization.writeVersionAndSerialize(
        new RangeStatisticsSerializer(bounds, writers, maxOpenPartitions), statistics);
  }

  private static final class Sampled {
    final List<Long> keys = new ArrayList<>();
    long bytes;
    long newestIngestMillis = Long.MIN_VALUE;
  }
}
