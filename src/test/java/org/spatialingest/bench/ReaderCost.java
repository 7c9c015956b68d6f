package org.spatialingest.bench;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.ParquetMetricsRowGroupFilter;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.io.LocalInputFile;
import org.apache.iceberg.shaded.org.apache.parquet.schema.MessageType;

/**
 * What a reader pays for a table (issue #24): the {@link QuerySet} through Iceberg's own Java read
 * path only, none of this project's code. Per query: the files scan planning keeps ({@code
 * table.newScan().filter(..).planFiles()}), the row groups of those files that Iceberg's Parquet
 * row-group filter ({@link ParquetMetricsRowGroupFilter}, on the footers' column statistics) keeps
 * and their compressed bytes (what reading those rows costs in I/O), the rows that match (read with
 * {@link IcebergGenerics}, which plans and filters row groups the same way, projected to the
 * filtered column, then tested exactly), and the wall time of all of it.
 */
final class ReaderCost {
  /** One query's figures. */
  record QueryResult(
      String query,
      int filesPlanned,
      int rowGroupsRead,
      int rowGroupsTotal,
      long bytesRead,
      long rowsReturned,
      long wallMs) {}

  /**
   * A query set's figures on one table, with the medians the report keeps; {@code rowsInSnapshot}
   * is how many rows the snapshot queried held (its summary's {@code total-records}), so that
   * tables that had committed different shares of the input can be compared per row.
   */
  record Result(List<QueryResult> queries, long rowsInSnapshot) {
    Result(List<QueryResult> queries) {
      this(queries, -1);
    }

    /** The median bbox query's bytes read per row the snapshot held; null if not known. */
    Double bboxBytesReadPerRow() {
      return rowsInSnapshot <= 0 ? null : bboxBytesReadMedian() / rowsInSnapshot;
    }

    double bboxFilesPlannedMedian() {
      return median(queries, true, QueryResult::filesPlanned);
    }

    double bboxBytesReadMedian() {
      return median(queries, true, QueryResult::bytesRead);
    }

    double timeRangeFilesPlannedMedian() {
      return median(queries, false, QueryResult::filesPlanned);
    }

    double timeRangeBytesReadMedian() {
      return median(queries, false, QueryResult::bytesRead);
    }

    /** The rows all queries returned; null when the rows were not read ({@code readRows}). */
    Long rowsReturnedTotal() {
      return rowsRead() ? queries.stream().mapToLong(QueryResult::rowsReturned).sum() : null;
    }

    boolean rowsRead() {
      return queries.stream().allMatch(q -> q.rowsReturned() >= 0);
    }

    List<Long> rowsReturned() {
      return queries.stream().map(QueryResult::rowsReturned).toList();
    }

    private static double median(
        List<QueryResult> qs,
        boolean bbox,
        java.util.function.ToDoubleFunction<QueryResult> figure) {
      double[] v =
          qs.stream()
              .filter(q -> q.query().startsWith("bbox") == bbox)
              .mapToDouble(figure)
              .toArray();
      return v.length == 0 ? Double.NaN : ThroughputReport.median(v);
    }
  }

  private ReaderCost() {}

  /**
   * Runs {@code set} on {@code snapshotId} of {@code table} (null: the table had no snapshot, every
   * figure 0); with {@code readRows} false the rows are not read (rows returned -1): planning and
   * row-group figures come from metadata and footers only, reading the rows is most of the cost.
   */
  static Result run(Table table, QuerySet set, Long snapshotId, boolean readRows)
      throws IOException {
    List<QueryResult> results = new ArrayList<>();
    for (QuerySet.Query q : set.queries()) {
      long start = System.nanoTime();
      int files = 0;
      int groupsRead = 0;
      int groupsTotal = 0;
      long bytes = 0;
      long rows = 0;
      if (snapshotId != null) {
        ParquetMetricsRowGroupFilter groupFilter =
            new ParquetMetricsRowGroupFilter(table.schema(), q.filter(), true);
        try (CloseableIterable<FileScanTask> tasks =
            table.newScan().useSnapshot(snapshotId).filter(q.filter()).planFiles()) {
          for (FileScanTask task : tasks) {
            files++;
            try (ParquetFileReader reader =
                ParquetFileReader.open(new LocalInputFile(localPath(task.file().location())))) {
              MessageType schema = reader.getFooter().getFileMetaData().getSchema();
              for (BlockMetaData group : reader.getFooter().getBlocks()) {
                groupsTotal++;
                if (groupFilter.shouldRead(schema, group)) {
                  groupsRead++;
                  bytes += group.getCompressedSize();
                }
              }
            }
          }
        }
        if (readRows) {
          try (CloseableIterable<Record> read =
              IcebergGenerics.read(table)
                  .useSnapshot(snapshotId)
                  .where(q.filter())
                  .select(q.column())
                  .reuseContainers()
                  .build()) {
            for (Record r : read) {
              if (q.matches(r)) {
                rows++;
              }
            }
          }
        } else {
          rows = -1;
        }
      }
      results.add(
          new QueryResult(
              q.name(),
              files,
              groupsRead,
              groupsTotal,
              bytes,
              rows,
              (System.nanoTime() - start) / 1_000_000));
    }
    long rowsInSnapshot = -1;
    if (snapshotId != null) {
      String total = table.snapshot(snapshotId).summary().get(SnapshotSummary.TOTAL_RECORDS_PROP);
      rowsInSnapshot = total == null ? -1 : Long.parseLong(total);
    }
    return new Result(List.copyOf(results), rowsInSnapshot);
  }

  /** The current snapshot's id, null if the table has none yet. */
  static Long currentSnapshot(Table table) {
    table.refresh();
    return table.currentSnapshot() == null ? null : table.currentSnapshot().snapshotId();
  }

  private static Path localPath(String location) {
    return location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
  }
}
