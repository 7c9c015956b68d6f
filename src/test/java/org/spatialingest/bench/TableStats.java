package org.spatialingest.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TelemetryTable;

/**
 * Reads the same figures from either sink's table: snapshots, current data files and their sizes,
 * freshness.
 */
final class TableStats {
  /** What a table holds after a run. */
  record Stats(
      long rows,
      int snapshots,
      int dataFiles,
      long fileBytes,
      long p10,
      long p50,
      long p90,
      long max,
      long maxRowAgeAtCommitMs,
      Map<String, Long> closeReasons,
      int partitions,
      Metadata metadata) {}

  /**
   * The files under the table's {@code metadata/} directory: {@code metadata.json} versions,
   * manifest lists and manifests, all that a reader and the next commit may have to read.
   */
  record Metadata(int files, long bytes) {}

  private TableStats() {}

  static Stats of(Table table) {
    table.refresh();
    int snapshots = 0;
    long maxAge = 0;
    int ingestField = TelemetryTable.SCHEMA.findField("ingest_time").fieldId();
    Map<String, Long> reasons = new TreeMap<>();
    for (Snapshot s : table.snapshots()) {
      snapshots++;
      // the oldest row of a snapshot is the smallest ingest_time lower bound among the files it
      // added
      for (DataFile f : s.addedDataFiles(table.io())) {
        ByteBuffer lower = f.lowerBounds() == null ? null : f.lowerBounds().get(ingestField);
        if (lower != null) {
          long micros = Conversions.fromByteBuffer(Types.TimestampType.withZone(), lower);
          maxAge = Math.max(maxAge, s.timestampMillis() - micros / 1000);
        }
      }
      s.summary()
          .forEach(
              (k, v) -> {
                if (k.startsWith(SnapshotSummaryKeys.CLOSED_PREFIX)) {
                  reasons.merge(
                      k.substring(SnapshotSummaryKeys.CLOSED_PREFIX.length()),
                      Long.parseLong(v),
                      Long::sum);
                }
              });
    }
    List<Long> sizes = new ArrayList<>();
    Set<String> partitions = new HashSet<>();
    long rows = 0;
    long bytes = 0;
    if (table.currentSnapshot() != null) {
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        for (FileScanTask t : tasks) {
          partitions.add(t.spec().partitionToPath(t.file().partition()));
          sizes.add(t.file().fileSizeInBytes());
          rows += t.file().recordCount();
          bytes += t.file().fileSizeInBytes();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    sizes.sort(null);
    return new Stats(
        rows,
        snapshots,
        sizes.size(),
        bytes,
        Percentiles.of(sizes, 10),
        Percentiles.of(sizes, 50),
        Percentiles.of(sizes, 90),
        sizes.isEmpty() ? 0 : sizes.get(sizes.size() - 1),
        maxAge,
        reasons,
        partitions.size(),
        metadata(table));
  }

  /** What the table's metadata directory holds now (its file IO lists it). */
  static Metadata metadata(Table table) {
    int files = 0;
    long bytes = 0;
    for (FileInfo f :
        ((SupportsPrefixOperations) table.io()).listPrefix(table.location() + "/metadata/")) {
      files++;
      bytes += f.size();
    }
    return new Metadata(files, bytes);
  }
}
