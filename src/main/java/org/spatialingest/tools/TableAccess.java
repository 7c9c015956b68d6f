package org.spatialingest.tools;

import java.util.Locale;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;

/**
 * Opens the job's table from a {@link JobConfig}, through the same {@link Catalogs} the job uses.
 */
public final class TableAccess implements AutoCloseable {
  private final Catalog catalog;
  private final Table table;
  private final TableIdentifier id;
  private final TableIdentifier rejectsId;

  private TableAccess(Catalog catalog, Table table, TableIdentifier id, TableIdentifier rejectsId) {
    this.catalog = catalog;
    this.table = table;
    this.id = id;
    this.rejectsId = rejectsId;
  }

  /**
   * Loads {@code table.namespace}.{@code table.name}; a missing table is a {@link ConfigException}
   * (exit 2).
   */
  public static TableAccess open(JobConfig config) {
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    TableIdentifier id = Catalogs.tableIdentifier(config);
    try {
      return new TableAccess(
          catalog, catalog.loadTable(id), id, Catalogs.rejectsTableIdentifier(config));
    } catch (NoSuchTableException e) {
      closeQuietly(catalog);
      throw new ConfigException(
          "table "
              + id
              + " does not exist in catalog '"
              + config.catalogName()
              + "' ("
              + config.catalogType().name().toLowerCase(Locale.ROOT)
              + ", warehouse "
              + config.warehouse()
              + "); check table.namespace/table.name and catalog.*");
    }
  }

  public Table table() {
    return table;
  }

  /** The rejects table beside it ({@code <table>_rejects}). */
  public Table rejects() {
    return catalog.loadTable(rejectsId);
  }

  public TableIdentifier id() {
    return id;
  }

  @Override
  public void close() {
    closeQuietly(catalog);
  }

  private static void closeQuietly(Catalog catalog) {
    if (catalog instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception ignored) {
        // nothing to do
      }
    }
  }
}
