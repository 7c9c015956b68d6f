package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.junit.jupiter.api.Test;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.TelemetryTable;
import org.spatialingest.tools.SinkWrittenTables;

class BufferedRowSizeTest {
  @Test
  void measuresWhatThePartitionBufferAccounts() throws Exception {
    List<GenericRowData> rows =
        SinkWrittenTables.rows(new TelemetryGenerator(3, 4, 5, 300), 20, 1_790_000_000_000L, 1000);
    BufferedRowSize size = new BufferedRowSize();
    PartitionBuffer buffer = new PartitionBuffer(null, 0);
    RowDataSerializer serializer = new RowDataSerializer(TelemetryTable.ROW_TYPE);
    DataInputDeserializer in = new DataInputDeserializer();
    long measured = 0;
    long polygonBytes = 0;
    for (GenericRowData row : rows) {
      byte[] bytes = size.serialize(row);
      long m = size.measure(row);
      assertThat(m).isEqualTo(bytes.length + PartitionBuffer.ROW_OVERHEAD_BYTES);
      assertThat(buffer.add(bytes, bytes.length, 0, 0, 0)).isEqualTo(m);
      assertThat(buffer.copyOfRow(buffer.size() - 1)).isEqualTo(bytes);
      measured += m;
      // the row as a downstream writer receives it after a network shuffle: same bytes
      in.setBuffer(bytes);
      RowData binary = serializer.deserialize(new BinaryRowData(TelemetryTable.FIELD_COUNT), in);
      assertThat(size.serialize(binary)).isEqualTo(bytes);
      if (row.getString(TelemetryTable.GEOMETRY_TYPE).toString().equals("Polygon")) {
        polygonBytes = Math.max(polygonBytes, m);
      }
    }
    assertThat(buffer.bytes()).isEqualTo(measured);
    assertThat(polygonBytes).as("a 300-vertex polygon buffers its WKB").isGreaterThan(300 * 16);
  }
}
