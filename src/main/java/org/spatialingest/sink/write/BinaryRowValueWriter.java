package org.spatialingest.sink.write;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinarySection;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.iceberg.DoubleFieldMetrics;
import org.apache.iceberg.FieldMetrics;
import org.apache.iceberg.FloatFieldMetrics;
import org.apache.iceberg.Schema;
import org.apache.iceberg.parquet.ColumnWriter;
import org.apache.iceberg.parquet.ParquetValueWriter;
import org.apache.iceberg.parquet.ParquetValueWriters;
import org.apache.iceberg.parquet.TripleWriter;
import org.apache.iceberg.shaded.org.apache.parquet.column.ColumnDescriptor;
import org.apache.iceberg.shaded.org.apache.parquet.column.ColumnWriteStore;
import org.apache.iceberg.shaded.org.apache.parquet.io.api.Binary;
import org.apache.iceberg.shaded.org.apache.parquet.schema.GroupType;
import org.apache.iceberg.shaded.org.apache.parquet.schema.MessageType;
import org.apache.iceberg.shaded.org.apache.parquet.schema.Type;
import org.apache.iceberg.types.Types;

/**
 * Writes the buffer's binary rows ({@link BinaryRowData}, as {@link PartitionBuffer#pointTo} lays
 * them out) straight into Iceberg's Parquet column writers: each field read once from the row's
 * memory, strings and binaries handed to Parquet as a view of that memory (no copy, no {@code
 * StringData} per value), timestamps as micros from the row's millis and nanos. What it replaces is
 * Iceberg's generic Flink writer tree ({@code FlinkParquetWriters}: a boxed getter per field, a
 * copy per string, a {@code LocalDateTime} per timestamp), which holds a third of a point row's
 * write cost; the file is the same: Iceberg's {@code ParquetWriter} still owns row groups, pages,
 * encodings, the footer and the metrics, and this writer reports the floating-point field metrics
 * Iceberg's own writers report (value, null and NaN counts, bounds).
 *
 * <p>For schemas of primitive columns (string, binary, boolean, int, long, float, double, date,
 * timestamp with or without zone in micros) and structs of them, required or optional ({@link
 * #supports}); anything else is written by Iceberg's generic writer.
 */
final class BinaryRowValueWriter implements ParquetValueWriter<RowData> {
  private final MessageType message;
  private final Field[] fields;
  private final List<TripleWriter<?>> columns = new ArrayList<>();
  private final List<Leaf> leaves = new ArrayList<>();

  /** Whether every column of {@code schema} is of a type this writer writes. */
  static boolean supports(Schema schema) {
    return supports(schema.asStruct());
  }

  private static boolean supports(Types.StructType struct) {
    for (Types.NestedField field : struct.fields()) {
      org.apache.iceberg.types.Type type = field.type();
      if (type.isStructType()) {
        if (!supports(type.asStructType())) {
          return false;
        }
        continue;
      }
      switch (type.typeId()) {
        case STRING, BINARY, BOOLEAN, INTEGER, LONG, FLOAT, DOUBLE, DATE, TIMESTAMP -> {}
        default -> {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * @param schema the file's Iceberg schema ({@link #supports} it)
   * @param rowType the rows' Flink type (the same fields in the same order)
   * @param type the Parquet schema Iceberg made of {@code schema}
   */
  BinaryRowValueWriter(Schema schema, RowType rowType, MessageType type) {
    this.message = type;
    this.fields = fields(schema.asStruct(), rowType, type, new ArrayList<>(), 0);
  }

  private Field[] fields(
      Types.StructType struct, RowType rowType, GroupType group, List<String> path, int level) {
    List<Types.NestedField> icebergFields = struct.fields();
    Field[] made = new Field[icebergFields.size()];
    for (int pos = 0; pos < made.length; pos++) {
      Types.NestedField field = icebergFields.get(pos);
      Type parquet = group.getType(pos);
      if (parquet.getId() == null || parquet.getId().intValue() != field.fieldId()) {
        throw new IllegalStateException(
            "Parquet field " + parquet.getName() + " is not Iceberg field " + field.name());
      }
      boolean optional = parquet.isRepetition(Type.Repetition.OPTIONAL);
      int fieldLevel = optional ? level + 1 : level;
      List<String> fieldPath = new ArrayList<>(path);
      fieldPath.add(parquet.getName());
      LogicalType logical = rowType.getTypeAt(pos);
      if (field.type().isStructType()) {
        RowType nested = (RowType) logical;
        made[pos] =
            new StructField(
                pos,
                optional,
                fieldLevel,
                nested.getFieldCount(),
                fields(
                    field.type().asStructType(),
                    nested,
                    parquet.asGroupType(),
                    fieldPath,
                    fieldLevel));
      } else {
        ColumnDescriptor descriptor =
            message.getColumnDescription(fieldPath.toArray(new String[0]));
        Leaf leaf = leaf(field, logical, pos, optional, fieldLevel, descriptor);
        leaves.add(leaf);
        columns.add(leaf.column);
        made[pos] = leaf;
      }
    }
    return made;
  }

  private static Leaf leaf(
      Types.NestedField field,
      LogicalType logical,
      int pos,
      boolean optional,
      int level,
      ColumnDescriptor descriptor) {
    return switch (field.type().typeId()) {
      case STRING, BINARY -> new BytesLeaf(pos, optional, level, descriptor);
      case BOOLEAN -> new BooleanLeaf(pos, optional, level, descriptor);
      case INTEGER, DATE -> new IntLeaf(pos, optional, level, descriptor);
      case LONG -> new LongLeaf(pos, optional, level, descriptor);
      case FLOAT -> new FloatLeaf(pos, optional, level, descriptor, field.fieldId());
      case DOUBLE -> new DoubleLeaf(pos, optional, level, descriptor, field.fieldId());
      case TIMESTAMP -> new TimestampLeaf(pos, optional, level, descriptor, precision(logical));
      default -> throw new IllegalArgumentException("not supported: " + field);
    };
  }

  private static int precision(LogicalType logical) {
    if (logical instanceof LocalZonedTimestampType zoned) {
      return zoned.getPrecision();
    }
    if (logical instanceof TimestampType plain) {
      return plain.getPrecision();
    }
    throw new IllegalArgumentException("not a timestamp: " + logical);
  }

  @Override
  public void write(int repetitionLevel, RowData row) {
    writeFields(row, fields, repetitionLevel);
  }

  private static void writeFields(RowData row, Field[] fields, int repetitionLevel) {
    for (Field field : fields) {
      if (row.isNullAt(field.pos)) {
        if (!field.optional) {
          throw new IllegalArgumentException(
              "null in a required column (position " + field.pos + ")");
        }
        field.nulls++;
        field.writeNull(repetitionLevel, field.level - 1);
      } else {
        field.write(row, repetitionLevel);
      }
    }
  }

  @Override
  public List<TripleWriter<?>> columns() {
    return columns;
  }

  @Override
  public void setColumnStore(ColumnWriteStore columnStore) {
    for (Leaf leaf : leaves) {
      leaf.writer.setColumnStore(columnStore);
    }
  }

  @Override
  public Stream<FieldMetrics<?>> metrics() {
    return leaves.stream().map(Leaf::metrics).filter(m -> m != null);
  }

  /** A field of a row: its position, whether it may be null, its definition level when set. */
  private abstract static class Field {
    final int pos;
    final boolean optional;
    final int level;
    long nulls;

    Field(int pos, boolean optional, int level) {
      this.pos = pos;
      this.optional = optional;
      this.level = level;
    }

    abstract void write(RowData row, int repetitionLevel);

    /** A null at {@code definitionLevel} in every column under this field. */
    abstract void writeNull(int repetitionLevel, int definitionLevel);
  }

  private static final class StructField extends Field {
    private final int arity;
    private final Field[] children;

    StructField(int pos, boolean optional, int level, int arity, Field[] children) {
      super(pos, optional, level);
      this.arity = arity;
      this.children = children;
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      writeFields(row.getRow(pos, arity), children, repetitionLevel);
    }

    @Override
    void writeNull(int repetitionLevel, int definitionLevel) {
      for (Field child : children) {
        child.writeNull(repetitionLevel, definitionLevel);
      }
    }
  }

  /** A primitive writer of Iceberg's, for its column writer. */
  private static final class Column extends ParquetValueWriters.PrimitiveWriter<Object> {
    Column(ColumnDescriptor descriptor) {
      super(descriptor);
    }

    ColumnWriter<Object> column() {
      return column;
    }
  }

  private abstract static class Leaf extends Field {
    final Column writer;
    final ColumnWriter<Object> column;

    Leaf(int pos, boolean optional, int level, ColumnDescriptor descriptor) {
      super(pos, optional, level);
      this.writer = new Column(descriptor);
      this.column = writer.column();
    }

    @Override
    void writeNull(int repetitionLevel, int definitionLevel) {
      column.writeNull(repetitionLevel, definitionLevel);
    }

    /** What Iceberg's own writer of this type reports, or null (the footer says it all). */
    FieldMetrics<?> metrics() {
      return null;
    }

    /** {@code measured} with this field's nulls counted, as Iceberg's optional writers do. */
    <T> FieldMetrics<T> withNulls(FieldMetrics<T> measured) {
      if (!optional) {
        return measured;
      }
      return new FieldMetrics<>(
          measured.id(),
          measured.valueCount() + nulls,
          nulls,
          measured.nanValueCount(),
          measured.lowerBound(),
          measured.upperBound());
    }
  }

  private static final class BytesLeaf extends Leaf {
    BytesLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor) {
      super(pos, optional, level, descriptor);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      column.writeBinary(repetitionLevel, bytes(row, pos));
    }
  }

  private static final long HIGHEST_FIRST_BIT = 0x80L << 56;
  private static final long HIGHEST_SECOND_TO_EIGHTH_BIT = 0x7FL << 56;

  /**
   * The bytes of variable-length field {@code pos} (a string or a binary) as a view of the row's
   * memory: the row format's offset-and-length word, or up to 7 bytes inline in the fixed part.
   * Rows of another kind, spanning memory segments or off-heap are copied.
   */
  private static Binary bytes(RowData row, int pos) {
    if (!(row instanceof BinarySection section)) {
      return Binary.fromReusedByteArray(row.getBinary(pos));
    }
    MemorySegment[] segments = section.getSegments();
    MemorySegment segment = segments[0];
    if (segments.length != 1 || segment.isOffHeap()) {
      return Binary.fromReusedByteArray(row.getBinary(pos));
    }
    int fieldOffset =
        section.getOffset() + BinaryRowData.calculateBitSetWidthInBytes(row.getArity()) + pos * 8;
    long word = segment.getLong(fieldOffset);
    if ((word & HIGHEST_FIRST_BIT) == 0) {
      int offset = (int) (word >> 32);
      int length = (int) word;
      return Binary.fromReusedByteArray(segment.getArray(), section.getOffset() + offset, length);
    }
    int length = (int) ((word & HIGHEST_SECOND_TO_EIGHTH_BIT) >>> 56);
    int start = BinaryRowData.LITTLE_ENDIAN ? fieldOffset : fieldOffset + 1;
    return Binary.fromReusedByteArray(segment.getArray(), start, length);
  }

  private static final class BooleanLeaf extends Leaf {
    BooleanLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor) {
      super(pos, optional, level, descriptor);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      column.writeBoolean(repetitionLevel, row.getBoolean(pos));
    }
  }

  private static final class IntLeaf extends Leaf {
    IntLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor) {
      super(pos, optional, level, descriptor);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      column.writeInteger(repetitionLevel, row.getInt(pos));
    }
  }

  private static final class LongLeaf extends Leaf {
    LongLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor) {
      super(pos, optional, level, descriptor);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      column.writeLong(repetitionLevel, row.getLong(pos));
    }
  }

  private static final class FloatLeaf extends Leaf {
    private final FloatFieldMetrics.Builder measured;

    FloatLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor, int id) {
      super(pos, optional, level, descriptor);
      this.measured = new FloatFieldMetrics.Builder(id);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      float value = row.getFloat(pos);
      column.writeFloat(repetitionLevel, value);
      measured.addValue(value);
    }

    @Override
    FieldMetrics<?> metrics() {
      return withNulls(measured.build());
    }
  }

  private static final class DoubleLeaf extends Leaf {
    private final DoubleFieldMetrics.Builder measured;

    DoubleLeaf(int pos, boolean optional, int level, ColumnDescriptor descriptor, int id) {
      super(pos, optional, level, descriptor);
      this.measured = new DoubleFieldMetrics.Builder(id);
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      double value = row.getDouble(pos);
      column.writeDouble(repetitionLevel, value);
      measured.addValue(value);
    }

    @Override
    FieldMetrics<?> metrics() {
      return withNulls(measured.build());
    }
  }

  /** Micros since the epoch (Iceberg's timestamp), from the row's millis and nanos of the milli. */
  private static final class TimestampLeaf extends Leaf {
    private final int precision;

    TimestampLeaf(
        int pos, boolean optional, int level, ColumnDescriptor descriptor, int precision) {
      super(pos, optional, level, descriptor);
      this.precision = precision;
    }

    @Override
    void write(RowData row, int repetitionLevel) {
      TimestampData t = row.getTimestamp(pos, precision);
      column.writeLong(
          repetitionLevel, t.getMillisecond() * 1_000 + t.getNanoOfMillisecond() / 1_000);
    }
  }
}
