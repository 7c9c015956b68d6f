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
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig.TimePartitioning;

/**
 * Creates a sink table if it is missing: format v2, time-only partitioning, sorted by the layout's
 * key.
 */
public final class TableBootstrap {
  private static final Logger LOG = LoggerFactory.getLogger(TableBootstrap.class);

  private TableBootstrap() {}

  static Map<String, String> properties(TableLayout layout) {
    Map<String, String> props = new HashMap<>();
    props.put(TableProperties.FORMAT_VERSION, "2");
    props.put(TableProperties.PARQUET_COMPRESSION, "zstd");
    // a commit every L rewrites metadata.json, whole: keep the last 10 of them, not every one since
    // the table was created, nor Iceberg's default 100 (at L = 60 s and 64 writers a day's file is
    // 3.2 MB, so 100 of them were 316 MB of the metadata directory; scale.md "A simulated day").
    // Old versions serve only a manual rollback of the metadata pointer; snapshots live in the
    // current one
    props.put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
    props.put(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "10");
    for (Types.NestedField column : layout.schema().columns()) {
      if (column.type().typeId() == Type.TypeID.BINARY) {
        // min/max of WKB or raw bytes prune nothing (the bbox columns carry the spatial stats)
        props.put(TableProperties.METRICS_MODE_COLUMN_CONF_PREFIX + column.name(), "none");
      }
    }
    return props;
  }

  /**
   * The writer's rows must match the table column for column (name and type, in order; field ids
   * aside): a table created before a column was added (e.g. {@code region}, or a new typed
   * property) fails here, at start, with the difference named. Two differences are allowed, both
   * left by {@link #migrateBboxStruct}: a column the table holds but the job no longer writes, if
   * optional (new files leave it out, their rows read it as null), and a column the job writes as
   * required that the table holds as optional (the files still write it required; see {@link
   * TableLayout#writeSchema}).
   */
  static void checkColumns(TableIdentifier id, Schema actual, Schema expected) {
    List<String> have = new ArrayList<>();
    List<String> want = new ArrayList<>();
    for (Types.NestedField f : actual.columns()) {
      Types.NestedField w = expected.findField(f.name());
      if (w == null && f.isOptional()) {
        continue; // retired
      }
      have.add(
          describe(
              w != null && w.isRequired()
                  ? Types.NestedField.of(f.fieldId(), false, f.name(), f.type())
                  : f));
    }
    for (Types.NestedField f : expected.columns()) {
      want.add(describe(f));
    }
    if (!have.equals(want)) {
      throw new IllegalStateException(
          "table "
              + id
              + " has columns "
              + have
              + " but the job writes "
              + want
              + "; alter the table to match or write to a new table.name");
    }
  }

  /** {@code name:type}, with a struct's fields spelled out by name, without the field ids. */
  private static String describe(Types.NestedField f) {
    return f.name() + ":" + (f.isOptional() ? "" : "required ") + describe(f.type());
  }

  private static String describe(Type type) {
    if (!type.isStructType()) {
      return type.toString();
    }
    return "struct<"
        + String.join(
            ", ", type.asStructType().fields().stream().map(TableBootstrap::describe).toList())
        + ">";
  }

  /**
   * The bbox columns of tables created before GeoParquet: four top-level doubles, now the fields of
   * {@code bbox}.
   */
  private static final List<String> FLAT_BBOX = List.of("xmin", "ymin", "xmax", "ymax");

  /**
   * A telemetry table created by an earlier build has its bbox as four top-level required doubles;
   * GeoParquet 1.1's bbox covering needs them as one struct column. Migrated in place: {@code bbox}
   * is added after {@code geometry_type} (optional in the table, since the old rows have none; new
   * files write it required) and the four old columns become optional. Old rows keep their values
   * there and read {@code bbox} as null; new rows have {@code bbox} and null in the old columns.
   * Nothing else about the table changes.
   */
  static void migrateBboxStruct(TableIdentifier id, Table table, Schema expected) {
    Types.NestedField bbox = expected.findField("bbox");
    Schema actual = table.schema();
    if (bbox == null
        || actual.findField("bbox") != null
        || !FLAT_BBOX.stream().allMatch(name -> actual.findField(name) != null)) {
      return;
    }
    UpdateSchema update = table.updateSchema();
    update.addColumn("bbox", bbox.type(), bbox.doc());
    for (String name : FLAT_BBOX) {
      update.makeColumnOptional(name);
    }
    update.moveAfter("bbox", "geometry_type");
    update.commit();
    table.refresh();
    LOG.info(
        "Table {} (created by an earlier build): added the struct column bbox for the GeoParquet bbox covering; "
            + "columns {} are kept, optional, for the rows written before",
        id,
        FLAT_BBOX);
  }

  /**
   * A column the job writes with a wider type than the table holds (a typed property declared
   * {@code int} then {@code long}, {@code float} then {@code double}) is widened in place:
   * Iceberg's own promotion rule ({@link TypeUtil#isPromotionAllowed}) decides what is wider, and
   * files written before read as the new type. Any other change of a column's type is refused,
   * naming the column, both types and the ways out: rewriting the old rows is a migration, not a
   * start.
   */
  static void widenColumns(TableIdentifier id, Table table, Schema expected) {
    Schema actual = table.schema();
    List<String> widened = new ArrayList<>();
    UpdateSchema update = table.updateSchema();
    for (Types.NestedField want : expected.columns()) {
      Types.NestedField have = actual.findField(want.name());
      if (have == null
          || !have.type().isPrimitiveType()
          || !want.type().isPrimitiveType()
          || have.type().equals(want.type())) {
        continue; // added, or a struct (left to checkColumns), or unchanged
      }
      Type.PrimitiveType to = want.type().asPrimitiveType();
      if (!TypeUtil.isPromotionAllowed(have.type(), to)) {
        throw new IllegalStateException(typeChangeRefused(id, want.name(), have.type(), to));
      }
      update.updateColumn(want.name(), to);
      widened.add(want.name() + ": " + have.type() + " -> " + to);
    }
    if (widened.isEmpty()) {
      return;
    }
    update.commit();
    table.refresh();
    LOG.info("Widened columns of table {} in place: {}", id, widened);
  }

  static String typeChangeRefused(
      TableIdentifier id, String column, Type tableType, Type wantedType) {
    return "column "
        + column
        + " of table "
        + id
        + " is "
        + tableType
        + " but the job writes it as "
        + wantedType
        + ": Iceberg changes a column's type in place only to a wider one (int -> long, float -> double,"
        + " decimal precision up), so old rows keep their values; "
        + tableType
        + " -> "
        + wantedType
        + " is not one. Keep "
        + column
        + " as "
        + tableType
        + ", or declare the new values under a new name (e.g. "
        + column
        + "_"
        + wantedType
        + ", old rows read null there), or copy the table into a new table.name with the new type";
  }

  /**
   * A table created by an earlier build lacks columns added since (e.g. {@code source}, {@code
   * source_offset}): when every existing column is still expected and every missing one is
   * optional, they are added in place — old rows read them as null. Anything else is left to {@link
   * #checkColumns}.
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
      } else if (!describe(have.type()).equals(describe(want.type()))) {
        return;
      }
    }
    long kept = actual.columns().stream().filter(f -> expected.findField(f.name()) != null).count();
    if (missing.isEmpty() || kept + missing.size() != expected.columns().size()) {
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
    LOG.info(
        "Added columns {} to table {} (created by an earlier build)",
        missing.stream().map(Types.NestedField::name).toList(),
        id);
  }

  public static Table ensureTable(
      Catalog catalog, TableIdentifier id, TableLayout layout, TimePartitioning partitioning) {
    if (catalog.tableExists(id)) {
      Table existing = catalog.loadTable(id);
      migrateBboxStruct(id, existing, layout.schema());
      widenColumns(id, existing, layout.schema());
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
      Table table =
          catalog
              .buildTable(id, layout.schema())
              .withPartitionSpec(layout.partitionSpec(partitioning))
              .withSortOrder(layout.sortOrder())
              .withProperties(properties(layout))
              .create();
      LOG.info(
          "Created table {} partitioned by {}({})",
          id,
          partitioning.name().toLowerCase(Locale.ROOT),
          layout.partitionTimeColumn());
      return table;
    } catch (AlreadyExistsException raced) {
      return catalog.loadTable(id);
    }
  }
}
