package org.spatialingest.sink;

import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.TelemetryTable;
import org.spatialingest.config.JobConfig.TimePartitioning;

/** Creates the telemetry table if it is missing: format v2, time-only partitioning, sorted by the Hilbert key. */
public final class TableBootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(TableBootstrap.class);

  private TableBootstrap() {}

  public static Table ensureTable(Catalog catalog, TableIdentifier id, TimePartitioning partitioning) {
    if (catalog.tableExists(id)) {
      return catalog.loadTable(id);
    }
    if (catalog instanceof SupportsNamespaces namespaces && !id.namespace().isEmpty()) {
      Namespace ns = id.namespace();
      if (!namespaces.namespaceExists(ns)) {
        try {
          namespaces.createNamespace(ns);
        } catch (AlreadyExistsException raced) {
          // another job created it first
        }
      }
    }
    try {
      Table table = catalog.buildTable(id, TelemetryTable.SCHEMA)
          .withPartitionSpec(TelemetryTable.partitionSpec(partitioning))
          .withSortOrder(TelemetryTable.sortOrder())
          .withProperties(Map.of(
              TableProperties.FORMAT_VERSION, "2",
              TableProperties.PARQUET_COMPRESSION, "zstd",
              // min/max of WKB bytes prune nothing; the bbox columns carry the spatial stats
              TableProperties.METRICS_MODE_COLUMN_CONF_PREFIX + "geometry", "none"))
          .create();
      LOG.info("Created table {} partitioned by {}({})", id, partitioning.name().toLowerCase(), "event_time");
      return table;
    } catch (AlreadyExistsException raced) {
      return catalog.loadTable(id);
    }
  }
}
