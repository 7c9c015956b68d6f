package org.spatialingest.table;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig.TimePartitioning;

/** Creates a sink table if it is missing: format v2, time-only partitioning, sorted by the layout's key. */
public final class TableBootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(TableBootstrap.class);

  private TableBootstrap() {}

  static Map<String, String> properties(TableLayout layout) {
    Map<String, String> props = new HashMap<>();
    props.put(TableProperties.FORMAT_VERSION, "2");
    props.put(TableProperties.PARQUET_COMPRESSION, "zstd");
    for (Types.NestedField column : layout.schema().columns()) {
      if (column.type().typeId() == Type.TypeID.BINARY) {
        // min/max of WKB or raw bytes prune nothing (the bbox columns carry the spatial stats)
        props.put(TableProperties.METRICS_MODE_COLUMN_CONF_PREFIX + column.name(), "none");
      }
    }
    return props;
  }

  /**
   * The writer's rows must match the table column for column (name and type, in order): a table created before a
   * column was added (e.g. {@code region}, or a new typed property) fails here, at start, with the difference named.
   */
  static void checkColumns(TableIdentifier id, Schema actual, Schema expected) {
    List<String> have = new ArrayList<>();
    List<String> want = new ArrayList<>();
    for (Types.NestedField f : actual.columns()) {
      have.add(f.name() + ":" + f.type());
    }
    for (Types.NestedField f : expected.columns()) {
      want.add(f.name() + ":" + f.type());
    }
    if (!have.equals(want)) {
      throw new IllegalStateException("table " + id + " has columns " + have + " but the job writes " + want
          + "; alter the table to match or write to a new table.name");
    }
  }

  /**
   * A table created by an earlier build lacks columns added since (e.g. {@code source}, {@code source_offset}): when
   * every existing column is still expected and every missing one is optional, they are added in place — old rows
   * read them as null. Anything else is left to {@link #checkColumns}.
   */
  static void addMissingOptionalColumns(TableIdentifier id, Table table, Schema expected) {
    Schema actual = table.schema();
    List<Types.NestedField> missing = new ArrayList<>();
    for (Types.NestedField want : expected.columns()) {
      Types.NestedField have = actual.findField(want.name());
      if (have == null) {
        if (want.isRequired()) {
          return;
        }
        missing.add(want);
      } else if (!have.type().equals(want.type())) {
        return;
      }
    }
    if (missing.isEmpty() || actual.columns().size() + missing.size() != expected.columns().size()) {
      return;
    }
    UpdateSchema update = table.updateSchema();
    for (Types.NestedField f : missing) {
      update.addColumn(f.name(), f.type(), f.doc());
    }
    String previous = null;
    for (Types.NestedField f : expected.columns()) {
      if (previous == null) {
        update.moveFirst(f.name());
      } else {
        update.moveAfter(f.name(), previous);
      }
      previous = f.name();
    }
    update.commit();
    table.refresh();
    LOG.info("Added columns {} to table {} (created by an earlier build)",
        missing.stream().map(Types.NestedField::name).toList(), id);
  }

  public static Table ensureTable(Catalog catalog, TableIdentifier id, TableLayout layout,
      TimePartitioning partitioning) {
    if (catalog.tableExists(id)) {
      Table existing = catalog.loadTable(id);
      addMissingOptionalColumns(id, existing, layout.schema());
      checkColumns(id, existing.schema(), layout.schema());
      return existing;
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
      Table table = catalog.buildTable(id, layout.schema())
          .withPartitionSpec(layout.partitionSpec(partitioning))
          .withSortOrder(layout.sortOrder())
          .withProperties(properties(layout))
          .create();
      LOG.info("Created table {} partitioned by {}({})", id, partitioning.name().toLowerCase(Locale.ROOT),
          layout.partitionTimeColumn());
      return table;
    } catch (AlreadyExistsException raced) {
      return catalog.loadTable(id);
    }
  }
}
