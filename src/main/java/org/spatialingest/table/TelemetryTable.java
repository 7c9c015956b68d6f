package org.spatialingest.table;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.spatialingest.config.InputConfig.AutoColumns;
import org.spatialingest.config.InputConfig.PropertyType;
import org.spatialingest.config.InputConfig.TypedProperty;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.JobConfig.TimePartitioning;

/**
 * The telemetry table: its Iceberg schema, the field positions of the Flink {@code RowData} the
 * transform produces and the sink writes, and its {@link TableLayout}: time-only partitioning and
 * the Hilbert sort order.
 */
public final class TelemetryTable {
  public static final int ID = 0;
  public static final int EVENT_TIME = 1;
  public static final int INGEST_TIME = 2;
  public static final int GEOMETRY = 3;
  public static final int GEOMETRY_TYPE = 4;

  /**
   * The geometry's bounding box: a struct of {@link #XMIN}, {@link #YMIN}, {@link #XMAX}, {@link
   * #YMAX}.
   */
  public static final int BBOX = 5;

  public static final int HILBERT = 6;
  public static final int PROPERTIES = 7;
  public static final int REGION = 8;
  public static final int SOURCE = 9;
  public static final int SOURCE_OFFSET = 10;

  /**
   * Fields of the base schema; typed properties ({@code input.typed-properties}) follow in declared
   * order.
   */
  public static final int FIELD_COUNT = 11;

  /**
   * Positions inside the {@link #BBOX} struct (the order GeoParquet 1.1 requires of a bbox covering
   * column).
   */
  public static final int XMIN = 0;

  public static final int YMIN = 1;
  public static final int XMAX = 2;
  public static final int YMAX = 3;
  public static final int BBOX_FIELDS = 4;

  /**
   * The bbox struct: GeoParquet 1.1's "bounding box column" (a group of xmin, ymin, xmax, ymax
   * doubles).
   */
  public static final Types.StructType BBOX_TYPE =
      Types.StructType.of(
          Types.NestedField.required(12, "xmin", Types.DoubleType.get()),
          Types.NestedField.required(13, "ymin", Types.DoubleType.get()),
          Types.NestedField.required(14, "xmax", Types.DoubleType.get()),
          Types.NestedField.required(15, "ymax", Types.DoubleType.get()));

  public static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.StringType.get()),
          Types.NestedField.required(2, "event_time", Types.TimestampType.withZone()),
          Types.NestedField.required(
              3, "ingest_time", Types.TimestampType.withZone(), "Kafka record timestamp (ingress)"),
          Types.NestedField.required(
              4, "geometry", Types.BinaryType.get(), "WKB, CRS84 (x = longitude, y = latitude)"),
          Types.NestedField.required(5, "geometry_type", Types.StringType.get()),
          Types.NestedField.required(
              6,
              "bbox",
              BBOX_TYPE,
              "bounding box of the geometry (GeoParquet 1.1 bbox covering); same repetition as geometry"),
          Types.NestedField.required(
              7,
              "hilbert",
              Types.LongType.get(),
              "Hilbert key of the bbox centre; files sort by it"),
          Types.NestedField.optional(
              8,
              "properties",
              Types.StringType.get(),
              "JSON object (the properties not declared as typed columns)"),
          Types.NestedField.optional(
              9,
              "region",
              Types.StringType.get(),
              "reference region containing the bbox centre (regions.refresh-kind), else null"),
          Types.NestedField.optional(
              10,
              "source",
              Types.StringType.get(),
              "where the record came from: <topic>/<partition>, or file:<path>"),
          Types.NestedField.optional(
              11,
              "source_offset",
              Types.LongType.get(),
              "the record's Kafka offset, or its 1-based line in the file"));

  public static final RowType ROW_TYPE = FlinkSchemaUtil.convert(SCHEMA);

  /**
   * Partitioned by the time of the event, freshness measured from the Kafka timestamp, sorted by
   * Hilbert key.
   */
  public static final TableLayout LAYOUT =
      new TableLayout(
          SCHEMA,
          "event_time",
          INGEST_TIME,
          "hilbert",
          null,
          new ColumnPositions(),
          geoParquet(),
          null);

  private TelemetryTable() {}

  /**
   * Every telemetry data file is a GeoParquet 1.1 file: {@code geometry} the primary column, {@code
   * bbox} its covering.
   */
  private static GeoParquetMetadata geoParquet() {
    return new GeoParquetMetadata("geometry", GEOMETRY_TYPE, "bbox", BBOX);
  }

  /**
   * The base schema plus one optional column per typed property, appended in declared order (ids
   * after the base schema's).
   */
  public static Schema schema(List<TypedProperty> typed) {
    if (typed.isEmpty()) {
      return SCHEMA;
    }
    List<Types.NestedField> columns = new ArrayList<>(SCHEMA.columns());
    int id = SCHEMA.highestFieldId() + 1;
    for (TypedProperty p : typed) {
      columns.add(
          Types.NestedField.optional(
              id++, p.name(), columnType(p.type()), "typed property (input.typed-properties)"));
    }
    return new Schema(columns);
  }

  /** The Iceberg type of a property's column. */
  public static Type.PrimitiveType columnType(PropertyType type) {
    return switch (type) {
      case STRING -> Types.StringType.get();
      case INT -> Types.IntegerType.get();
      case LONG -> Types.LongType.get();
      case FLOAT -> Types.FloatType.get();
      case DOUBLE -> Types.DoubleType.get();
      case BOOLEAN -> Types.BooleanType.get();
    };
  }

  /** The layout for the configured typed properties ({@link #LAYOUT} when there are none). */
  public static TableLayout layout(List<TypedProperty> typed) {
    return layout(typed, false);
  }

  /**
   * ... and, with {@code partitionByRegion}, identity partitioning by {@code region} after the
   * time.
   */
  public static TableLayout layout(List<TypedProperty> typed, boolean partitionByRegion) {
    return layout(typed, partitionByRegion, null);
  }

  /** ... and, with {@code auto}, columns added from the properties each file's rows send. */
  private static TableLayout layout(
      List<TypedProperty> typed, boolean partitionByRegion, AutoColumns auto) {
    if (typed.isEmpty() && !partitionByRegion && auto == null) {
      return LAYOUT;
    }
    Schema schema = schema(typed);
    return new TableLayout(
        schema,
        "event_time",
        INGEST_TIME,
        "hilbert",
        partitionByRegion ? "region" : null,
        new ColumnPositions(),
        geoParquet(),
        auto == null ? null : new PropertyColumns(auto, schema, PROPERTIES));
  }

  /** The layout the job writes with {@code config}. */
  public static TableLayout layout(JobConfig config) {
    return layout(
        config.input().typedProperties(),
        config.regions().partition(),
        config.input().autoColumns());
  }

  /** A row's source position is in its {@code source} and {@code source_offset} columns. */
  private static final class ColumnPositions implements SourcePositionReader {
    @Override
    public StringData key(RowData row) {
      return row.isNullAt(SOURCE) ? null : row.getString(SOURCE);
    }

    @Override
    public long position(RowData row) {
      return row.getLong(SOURCE_OFFSET);
    }
  }

  public static PartitionSpec partitionSpec(TimePartitioning partitioning) {
    return LAYOUT.partitionSpec(partitioning);
  }
}
