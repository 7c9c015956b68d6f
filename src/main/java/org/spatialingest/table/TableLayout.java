package org.spatialingest.table;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Types;
import org.spatialingest.config.JobConfig.TimePartitioning;

/**
 * What the sink needs to know about the rows of one table: the schema, the time column it
 * partitions by (time only), the field holding each row's ingest time (the freshness bound is
 * measured from it), and the long field rows are sorted by inside a file (or none).
 *
 * @param schema Iceberg schema; the Flink {@code RowData} the sink receives has the same fields in
 *     the same order
 * @param partitionTimeColumn the timestamp column partitioned by day or hour
 * @param ingestTimeField position of the ingest-time (Kafka timestamp) field, a timestamp with time
 *     zone
 * @param sortKeyColumn the long column files are sorted by, or {@code null} to keep arrival order
 * @param identityPartitionColumn a coarse column (a handful of values, e.g. a region) partitioned
 *     by identity after the time, or {@code null}
 * @param sourcePositions reads each row's source position, or {@code null} if rows carry none (then
 *     the sink records no positions for this table)
 * @param fileMetadata the footer metadata each data file gets from its rows (e.g. GeoParquet's
 *     {@code geo}), or {@code null} for plain files
 * @param propertyColumns the columns each data file adds from its rows' properties ({@code
 *     input.typed-properties: auto}), or {@code null}
 */
@PublicEvolving
public record TableLayout(
    Schema schema,
    String partitionTimeColumn,
    int ingestTimeField,
    String sortKeyColumn,
    String identityPartitionColumn,
    SourcePositionReader sourcePositions,
    FileMetadata fileMetadata,
    PropertyColumns propertyColumns)
    implements Serializable {

  /** Time-only partitioning, no source positions. */
  public TableLayout(
      Schema schema, String partitionTimeColumn, int ingestTimeField, String sortKeyColumn) {
    this(schema, partitionTimeColumn, ingestTimeField, sortKeyColumn, null, null, null, null);
  }

  /**
   * The schema files are written with: the layout's columns, in its order, with the ids {@code
   * table} gave them. Equal to the table's schema for a table this build created; a table of an
   * earlier build may also hold retired optional columns ({@link TableBootstrap}), which new files
   * leave out, and may have made optional what the layout requires (new files keep it required:
   * e.g. GeoParquet wants the bbox column's repetition to be the geometry's).
   */
  public Schema writeSchema(Schema table) {
    List<Types.NestedField> columns = new ArrayList<>();
    for (Types.NestedField want : schema.columns()) {
      Types.NestedField have = table.findField(want.name());
      if (have == null) {
        throw new IllegalStateException("table has no column " + want.name());
      }
      columns.add(
          have.isOptional() == want.isOptional()
              ? have
              : Types.NestedField.of(
                  have.fieldId(), want.isOptional(), have.name(), have.type(), have.doc()));
    }
    return new Schema(columns);
  }

  public RowType rowType() {
    return FlinkSchemaUtil.convert(schema);
  }

  public int fieldCount() {
    return schema.columns().size();
  }

  public PartitionSpec partitionSpec(TimePartitioning partitioning) {
    PartitionSpec.Builder b = PartitionSpec.builderFor(schema);
    switch (partitioning) {
      case DAY -> b.day(partitionTimeColumn);
      case HOUR -> b.hour(partitionTimeColumn);
    }
    if (identityPartitionColumn != null) {
      b.identity(identityPartitionColumn);
    }
    return b.build();
  }

  public SortOrder sortOrder() {
    return sortKeyColumn == null
        ? SortOrder.unsorted()
        : SortOrder.builderFor(schema).asc(sortKeyColumn).build();
  }

  public long ingestMillis(RowData row) {
    return row.getTimestamp(ingestTimeField, 6).getMillisecond();
  }

  /** Position of the sort key, or -1. */
  public int sortKeyField() {
    if (sortKeyColumn == null) {
      return -1;
    }
    for (int i = 0; i < schema.columns().size(); i++) {
      if (schema.columns().get(i).name().equals(sortKeyColumn)) {
        return i;
      }
    }
    throw new IllegalArgumentException(
        "sort key column " + sortKeyColumn + " is not in the schema");
  }
}
