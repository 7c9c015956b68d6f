package org.spatialingest.sink.write;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Turns a staged row written with an earlier schema into the current schema's serialized form, by
 * field id: a current column takes the value of the written field with its id (same type, or one
 * the table has since widened it from: int to long, float to double), or null if the run has no
 * such field (the column must then be optional).
 */
final class RowProjection {
  private final RowDataSerializer writtenSerializer;
  private final RowDataSerializer currentSerializer;
  private final int writtenArity;
  private final RowData.FieldGetter[] getters;
  private final DataInputDeserializer in = new DataInputDeserializer();
  private final DataOutputSerializer out = new DataOutputSerializer(256);

  RowProjection(Schema written, Schema current, RowDataSerializer currentSerializer, String path)
      throws IOException {
    RowType writtenType = FlinkSchemaUtil.convert(written);
    this.writtenSerializer = new RowDataSerializer(writtenType);
    this.currentSerializer = currentSerializer;
    this.writtenArity = written.columns().size();
    this.getters = new RowData.FieldGetter[current.columns().size()];
    for (int i = 0; i < getters.length; i++) {
      Types.NestedField want = current.columns().get(i);
      int from = indexOf(written, want.fieldId());
      if (from < 0) {
        if (want.isRequired()) {
          throw new IOException(
              "staging run "
                  + path
                  + " lacks required column "
                  + want.name()
                  + " (id "
                  + want.fieldId()
                  + ")");
        }
        continue;
      }
      Types.NestedField have = written.columns().get(from);
      RowData.FieldGetter read = RowData.createFieldGetter(writtenType.getTypeAt(from), from);
      if (have.type().typeId() == Type.TypeID.INTEGER && want.type().typeId() == Type.TypeID.LONG) {
        getters[i] = row -> widen(read.getFieldOrNull(row), v -> ((Integer) v).longValue());
        continue;
      }
      if (have.type().typeId() == Type.TypeID.FLOAT && want.type().typeId() == Type.TypeID.DOUBLE) {
        getters[i] = row -> widen(read.getFieldOrNull(row), v -> (double) (Float) v);
        continue;
      }
      if (!have.type().equals(want.type())) {
        throw new IOException(
            "staging run "
                + path
                + " holds column id "
                + want.fieldId()
                + " as "
                + have.type()
                + ", the table now has "
                + want.type()
                + "; start the job without state");
      }
      getters[i] = read;
    }
  }

  private static Object widen(Object value, java.util.function.UnaryOperator<Object> to) {
    return value == null ? null : to.apply(value);
  }

  byte[] apply(byte[] written) throws IOException {
    in.setBuffer(written);
    RowData row = writtenSerializer.deserialize(new BinaryRowData(writtenArity), in);
    GenericRowData projected = new GenericRowData(row.getRowKind(), getters.length);
    for (int i = 0; i < getters.length; i++) {
      projected.setField(i, getters[i] == null ? null : getters[i].getFieldOrNull(row));
    }
    out.clear();
    currentSerializer.serialize(projected, out);
    return out.getCopyOfBuffer();
  }

  private static int indexOf(Schema schema, int fieldId) {
    for (int i = 0; i < schema.columns().size(); i++) {
      if (schema.columns().get(i).fieldId() == fieldId) {
        return i;
      }
    }
    return -1;
  }
}
