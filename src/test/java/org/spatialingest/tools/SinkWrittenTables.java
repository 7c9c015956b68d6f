package org.spatialingest.tools;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.table.data.GenericRowData;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.Catalog;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.RecordRejectedException;
import org.spatialingest.geometry.TelemetryParser;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.write.SinkFiles;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableBootstrap;

/**
 * Test tables written through the sink's own file writer ({@link SinkFiles}) in a Hadoop catalog,
 * committed as the sink's committer does: one append per batch with the sink's snapshot-summary
 * keys.
 */
public final class SinkWrittenTables {
  private SinkWrittenTables() {}

  public static JobConfig config(
      Path warehouse, String namespace, String table, String partitioning) {
    Map<String, String> m = new HashMap<>();
    m.put("catalog.type", "hadoop");
    m.put("catalog.warehouse", warehouse.toString());
    m.put("table.namespace", namespace);
    m.put("table.name", table);
    m.put("table.partitioning", partitioning);
    return JobConfig.fromMap(m);
  }

  /** The CLI flags that locate {@code config}'s table. */
  public static List<String> catalogArgs(JobConfig config) {
    return List.of(
        "--set",
        "catalog.warehouse=" + config.warehouse(),
        "--set",
        "table.partitioning=" + config.partitioning().name().toLowerCase(),
        "--set",
        "table.namespace=" + config.namespace(),
        "--set",
        "table.name=" + config.table());
  }

  public static Table create(JobConfig config, Map<String, String> properties) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    Table table =
        TableBootstrap.ensureTable(
            catalog,
            Catalogs.tableIdentifier(config),
            org.spatialingest.table.TelemetryTable.LAYOUT,
            config.partitioning());
    if (!properties.isEmpty()) {
      UpdateProperties update = table.updateProperties();
      properties.forEach(update::set);
      update.commit();
    }
    return table;
  }

  /**
   * {@code n} parsed generator rows with event times from {@code eventStart}, ingest one second
   * later.
   */
  public static List<GenericRowData> rows(
      TelemetryGenerator generator, int n, long eventStart, long stepMillis)
      throws RecordRejectedException {
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84);
    List<GenericRowData> rows = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long event = eventStart + i * stepMillis;
      rows.add(parser.parse(generator.next(event).json(), event + 1000).row());
    }
    return rows;
  }

  /** Writes and commits {@code rows} as one sink batch whose files closed for {@code reason}. */
  public static Snapshot commit(
      Table table, List<GenericRowData> rows, CloseReason reason, long checkpointId)
      throws IOException {
    SinkFiles.Written w = SinkFiles.write(table, rows);
    AppendFiles append = table.newAppend();
    w.files().forEach(append::appendFile);
    append.set(SnapshotSummaryKeys.BATCH_ID, UUID.randomUUID().toString());
    append.set(SnapshotSummaryKeys.FLINK_JOB_ID, "test-job");
    append.set(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(checkpointId));
    append.set(SnapshotSummaryKeys.ROWS, Long.toString(w.rows()));
    append.set(SnapshotSummaryKeys.FILES, Integer.toString(w.files().size()));
    append.set(SnapshotSummaryKeys.FILE_BYTES, Long.toString(w.fileBytes()));
    append.set(SnapshotSummaryKeys.BUFFERED_BYTES, Long.toString(w.bufferedBytes()));
    append.set(SnapshotSummaryKeys.MIN_INGEST_MS, Long.toString(w.minIngestMillis()));
    append.set(SnapshotSummaryKeys.MAX_INGEST_MS, Long.toString(w.maxIngestMillis()));
    append.set(
        SnapshotSummaryKeys.CLOSED_PREFIX + reason.code(), Integer.toString(w.files().size()));
    append.commit();
    table.refresh();
    return table.currentSnapshot();
  }
}
