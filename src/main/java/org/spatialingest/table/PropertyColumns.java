package org.spatialingest.table;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.InputConfig;
import org.spatialingest.config.InputConfig.AutoColumns;

/**
 * {@code input.typed-properties: auto}: the top-level properties a data file's rows send become
 * optional columns of the file and the table. The writer scans a file's rows first ({@link
 * FileScan#add}), then adds the columns the table lacks ({@link FileScan#commitColumns}: an
 * idempotent {@code UpdateSchema}, retried on a concurrent change, never undoing one), then writes
 * every row expanded to the file's one schema ({@link FileColumns#expand}). A value that cannot be
 * a column stays in {@code properties} and is counted by {@link Reason}; nothing is rejected.
 */
public final class PropertyColumns implements Serializable {
  private static final Logger LOG = LoggerFactory.getLogger(PropertyColumns.class);

  /** Why a property stayed in {@code properties}. */
  public enum Reason {
    /** no letter or digit left after lower-casing and replacing other characters */
    INVALID_NAME,
    /** the name of a base column ({@code event_time}, {@code id}, ...) */
    BASE_COLUMN,
    /** not in {@code input.auto-columns.allow} */
    NOT_ALLOWED,
    /** the table has {@code input.auto-columns.max} property columns */
    OVER_CAP,
    /** the value does not fit the column's type (the first type seen won) */
    TYPE_MISMATCH;

    public String code() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  static final String DOC = "property column (input.typed-properties: auto)";
  private static final long LOG_INTERVAL_MILLIS = 10_000;

  private final AutoColumns config;
  private final int propertiesField;
  private final Set<String> baseColumns;
  private transient ObjectMapper mapper;
  private transient Map<Reason, Long> kept;
  private transient long lastLog;

  PropertyColumns(AutoColumns config, Schema base, int propertiesField) {
    this.config = config;
    this.propertiesField = propertiesField;
    Set<String> names = new HashSet<>(InputConfig.RESERVED);
    for (Types.NestedField f : base.columns()) {
      names.add(f.name());
    }
    this.baseColumns = Set.copyOf(names);
  }

  /**
   * A property name as a column name: lower-cased, every character other than {@code a-z0-9_}
   * replaced by {@code _}, a leading digit prefixed with {@code _}; null if no letter or digit is
   * left.
   */
  public static String columnName(String property) {
    StringBuilder b = new StringBuilder(property.length());
    boolean any = false;
    for (char c : property.toLowerCase(Locale.ROOT).toCharArray()) {
      boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      any |= ok;
      b.append(ok || c == '_' ? c : '_');
    }
    if (!any || b.length() > 128) {
      return null;
    }
    return Character.isDigit(b.charAt(0)) ? "_" + b : b.toString();
  }

  /** The column type a JSON value suggests, or null for null, objects and arrays. */
  static Type.PrimitiveType inferred(JsonNode v) {
    if (v.isBoolean()) {
      return Types.BooleanType.get();
    }
    if (v.isIntegralNumber() && v.canConvertToLong()) {
      return Types.LongType.get();
    }
    if (v.isNumber()) {
      return Types.DoubleType.get();
    }
    if (v.isTextual()) {
      return Types.StringType.get();
    }
    return null;
  }

  /** {@code v} as a value of a column of {@code type}, or null if it does not fit. */
  static Object fit(JsonNode v, Type type) {
    return switch (type.typeId()) {
      case BOOLEAN -> v.isBoolean() ? v.asBoolean() : null;
      case INTEGER -> v.isIntegralNumber() && v.canConvertToInt() ? v.asInt() : null;
      case LONG -> v.isIntegralNumber() && v.canConvertToLong() ? v.asLong() : null;
      case FLOAT -> v.isNumber() ? v.floatValue() : null;
      case DOUBLE -> v.isNumber() ? v.asDouble() : null;
      case STRING -> v.isTextual() ? StringData.fromString(v.asText()) : null;
      default -> null;
    };
  }

  /** The table's property columns: every top-level primitive column that is not a base column. */
  List<Types.NestedField> propertyColumns(Schema table) {
    List<Types.NestedField> out = new ArrayList<>();
    for (Types.NestedField f : table.columns()) {
      if (!baseColumns.contains(f.name()) && f.type().isPrimitiveType()) {
        out.add(f);
      }
    }
    return out;
  }

  public FileScan newScan() {
    return new FileScan();
  }

  private ObjectNode properties(RowData row) {
    if (row.isNullAt(propertiesField)) {
      return null;
    }
    if (mapper == null) {
      mapper = new ObjectMapper();
    }
    try {
      JsonNode node = mapper.readTree(row.getString(propertiesField).toString());
      return node instanceof ObjectNode o ? o : null;
    } catch (JsonProcessingException e) {
      return null; // the transform wrote it; not a reason to fail a file
    }
  }

  /** Counts per reason since the job started in this writer (for the metric). */
  public synchronized Map<Reason, Long> keptCounts() {
    return kept == null ? Map.of() : Map.copyOf(kept);
  }

  private synchronized void count(Map<Reason, Long> file, String example) {
    if (file.isEmpty()) {
      return;
    }
    if (kept == null) {
      kept = new EnumMap<>(Reason.class);
    }
    file.forEach((r, n) -> kept.merge(r, n, Long::sum));
    long now = System.currentTimeMillis();
    if (now - lastLog >= LOG_INTERVAL_MILLIS) {
      lastLog = now;
      LOG.info(
          "Properties kept in 'properties' instead of a column, by reason, since start: {} (e.g. '{}')",
          kept,
          example);
    }
  }

  /** One file's pass over its rows: the columns they need. */
  public final class FileScan {
    private final Map<String, Type.PrimitiveType> seen = new LinkedHashMap<>();

    public void add(RowData row) {
      ObjectNode props = properties(row);
      if (props == null) {
        return;
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String column = columnName(e.getKey());
        Type.PrimitiveType type = inferred(e.getValue());
        if (column == null
            || type == null
            || baseColumns.contains(column)
            || !config.allows(column)) {
          continue;
        }
        seen.merge(
            column,
            type,
            (first, next) ->
                first.typeId() == Type.TypeID.LONG && next.typeId() == Type.TypeID.DOUBLE
                    ? next
                    : first);
      }
    }

    /**
     * Adds to {@code table} the columns this file's rows need and it lacks, up to the cap, in one
     * schema commit (re-planned on a concurrent commit: a column another writer added is kept as it
     * is); returns how to write the file.
     */
    public FileColumns commitColumns(Table table, Schema baseWriteSchema) {
      boolean added = false;
      for (int attempt = 0; ; attempt++) {
        Schema schema = table.schema();
        List<Map.Entry<String, Type.PrimitiveType>> missing = new ArrayList<>();
        int room = config.maxColumns() - propertyColumns(schema).size();
        for (Map.Entry<String, Type.PrimitiveType> e : seen.entrySet()) {
          if (schema.findField(e.getKey()) == null && missing.size() < room) {
            missing.add(e);
          }
        }
        if (missing.isEmpty()) {
          return new FileColumns(baseWriteSchema, propertyColumns(schema), added);
        }
        if (attempt == 0) {
          table.refresh(); // another writer may have added them already
          continue;
        }
        UpdateSchema update = table.updateSchema();
        for (Map.Entry<String, Type.PrimitiveType> e : missing) {
          update.addColumn(e.getKey(), e.getValue(), DOC);
        }
        try {
          update.commit();
          added = true;
          LOG.info(
              "Added property columns to table {}: {}",
              table.name(),
              missing.stream().map(e -> e.getKey() + ":" + e.getValue()).toList());
        } catch (CommitFailedException e) {
          if (attempt > 20) {
            throw e;
          }
        }
        table.refresh();
      }
    }
  }

  /** How one file is written: its schema (base columns, then property columns) and its rows. */
  public final class FileColumns {
    private final Schema schema;
    private final RowType rowType;
    private final int baseCount;
    private final RowData.FieldGetter[] base;
    private final Map<String, Integer> positions = new HashMap<>();
    private final Type[] types;
    private final boolean added;

    FileColumns(Schema baseWriteSchema, List<Types.NestedField> columns, boolean added) {
      this.added = added;
      List<Types.NestedField> all = new ArrayList<>(baseWriteSchema.columns());
      all.addAll(columns);
      this.schema = new Schema(all);
      this.rowType = FlinkSchemaUtil.convert(schema);
      RowType baseType = FlinkSchemaUtil.convert(baseWriteSchema);
      this.baseCount = baseWriteSchema.columns().size();
      this.base = new RowData.FieldGetter[baseCount];
      for (int i = 0; i < baseCount; i++) {
        base[i] = RowData.createFieldGetter(baseType.getTypeAt(i), i);
      }
      this.types = new Type[columns.size()];
      for (int i = 0; i < columns.size(); i++) {
        positions.put(columns.get(i).name(), i);
        types[i] = columns.get(i).type();
      }
    }

    public Schema schema() {
      return schema;
    }

    /** Whether this file's scan added columns to the table. */
    public boolean addedColumns() {
      return added;
    }

    public RowType rowType() {
      return rowType;
    }

    /**
     * The row with its properties moved into their columns (the first property that maps to a
     * column wins); the rest, and what does not fit, stay in {@code properties}.
     */
    public RowData expand(RowData row) {
      GenericRowData out = new GenericRowData(row.getRowKind(), baseCount + types.length);
      for (int i = 0; i < baseCount; i++) {
        out.setField(i, base[i].getFieldOrNull(row));
      }
      ObjectNode props = properties(row);
      if (props == null) {
        return out;
      }
      Map<Reason, Long> reasons = new EnumMap<>(Reason.class);
      String example = null;
      boolean moved = false;
      for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode v = e.getValue();
        if (v.isNull() || v.isContainerNode()) {
          continue; // nested objects and arrays stay, by design
        }
        String column = columnName(e.getKey());
        Reason reason = null;
        if (column == null) {
          reason = Reason.INVALID_NAME;
        } else if (baseColumns.contains(column)) {
          reason = Reason.BASE_COLUMN;
        } else if (!config.allows(column)) {
          reason = Reason.NOT_ALLOWED;
        } else {
          Integer at = positions.get(column);
          if (at == null) {
            reason = Reason.OVER_CAP;
          } else if (out.getField(baseCount + at) == null) {
            Object value = fit(v, types[at]);
            if (value == null) {
              reason = Reason.TYPE_MISMATCH;
            } else {
              out.setField(baseCount + at, value);
              it.remove();
              moved = true;
            }
          } else {
            reason = Reason.TYPE_MISMATCH; // a second property with the same column name
          }
        }
        if (reason != null) {
          reasons.merge(reason, 1L, Long::sum);
          example = example == null ? e.getKey() : example;
        }
      }
      if (moved) {
        try {
          out.setField(propertiesField, StringData.fromString(mapper.writeValueAsString(props)));
        } catch (JsonProcessingException e) {
          throw new IllegalStateException(e); // it was just parsed
        }
      }
      count(reasons, example);
      return out;
    }
  }
}
