package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.spatialingest.TelemetryTable;
import org.spatialingest.config.JobConfig.TimePartitioning;

class SerializerRoundTripTest {
  private static final PartitionSpec SPEC = TelemetryTable.partitionSpec(TimePartitioning.HOUR);
  private static final SortOrder ORDER = SortOrder.builderFor(TelemetryTable.SCHEMA).withOrderId(1)
      .asc("hilbert").build();

  @Test
  void fileBatchKeepsEveryFieldAnAppendNeeds() throws Exception {
    DataFile a = dataFile("file:/w/a.parquet", 491_000, 1234, List.of(4L, 1_000_000L));
    DataFile b = dataFile("file:/w/b.parquet", 491_001, 7, null);
    FileBatch batch = new FileBatch(42, List.of(a, b), List.of(CloseReason.BYTES, CloseReason.END_OF_INPUT),
        99_999, 1_000L, 2_000L, 3_000L, Map.of(SPEC.specId(), SPEC), Map.of(ORDER.orderId(), ORDER), "lineage-1",
        Map.of(1_795_946_400L, 7L, 1_795_946_401L, 3L));
    FileBatchSerializer serializer = new FileBatchSerializer();
    FileBatch copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(batch));

    assertThat(copy.checkpointId()).isEqualTo(42);
    assertThat(copy.reasons()).containsExactly(CloseReason.BYTES, CloseReason.END_OF_INPUT);
    assertThat(copy.bufferedBytes()).isEqualTo(99_999);
    assertThat(copy.minIngestMillis()).isEqualTo(1_000L);
    assertThat(copy.maxIngestMillis()).isEqualTo(2_000L);
    assertThat(copy.createdAtMillis()).isEqualTo(3_000L);
    assertThat(copy.specs().get(SPEC.specId()).compatibleWith(SPEC)).isTrue();
    assertThat(copy.sortOrders().get(1).sameOrder(ORDER)).isTrue();
    for (int i = 0; i < 2; i++) {
      DataFile in = batch.files().get(i);
      DataFile out = copy.files().get(i);
      assertThat(out.location()).isEqualTo(in.location());
      assertThat(out.format()).isEqualTo(FileFormat.PARQUET);
      assertThat(out.partition().get(0, Integer.class)).isEqualTo(in.partition().get(0, Integer.class));
      assertThat(out.fileSizeInBytes()).isEqualTo(in.fileSizeInBytes());
      assertThat(out.recordCount()).isEqualTo(in.recordCount());
      assertThat(out.columnSizes()).isEqualTo(in.columnSizes());
      assertThat(out.valueCounts()).isEqualTo(in.valueCounts());
      assertThat(out.nullValueCounts()).isEqualTo(in.nullValueCounts());
      assertThat(out.lowerBounds()).isEqualTo(in.lowerBounds());
      assertThat(out.upperBounds()).isEqualTo(in.upperBounds());
      assertThat(out.splitOffsets()).isEqualTo(in.splitOffsets());
      assertThat(out.sortOrderId()).isEqualTo(1);
    }
    assertThat(copy.lineage()).isEqualTo("lineage-1");
    assertThat(copy.ingestSecondCounts()).containsEntry(1_795_946_400L, 7L).containsEntry(1_795_946_401L, 3L);
    assertThat(copy.batchId()).isEqualTo(batch.batchId());
  }

  @Test
  void unknownVersionsAreRefused() {
    assertThatThrownBy(() -> new FileBatchSerializer().deserialize(99, new byte[0])).hasMessageContaining("99");
    assertThatThrownBy(() -> new WriterStateSerializer().deserialize(99, new byte[0])).hasMessageContaining("99");
  }

  @Test
  void writerStateRoundTrips() throws Exception {
    WriterState state = new WriterState(List.of(new byte[] {1, 2, 3}, new byte[0], new byte[70_000]));
    WriterStateSerializer serializer = new WriterStateSerializer();
    WriterState copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
    assertThat(copy.rows()).hasSize(3);
    assertThat(copy.rows().get(0)).containsExactly(1, 2, 3);
    assertThat(copy.rows().get(1)).isEmpty();
    assertThat(copy.rows().get(2)).hasSize(70_000);
  }

  private static DataFile dataFile(String path, int hour, long rows, List<Long> splits) {
    PartitionData partition = new PartitionData(SPEC.partitionType());
    partition.set(0, hour);
    ByteBuffer lower = Conversions.toByteBuffer(Types.DoubleType.get(), -12.5);
    ByteBuffer upper = Conversions.toByteBuffer(Types.DoubleType.get(), 44.25);
    DataFiles.Builder b = DataFiles.builder(SPEC)
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withPartition(partition)
        .withFileSizeInBytes(rows * 100)
        .withMetrics(new Metrics(rows, Map.of(6, 10L), Map.of(6, rows), Map.of(6, 0L), Map.of(6, 0L),
            Map.of(6, lower), Map.of(6, upper)))
        .withSortOrder(ORDER);
    if (splits != null) {
      b.withSplitOffsets(splits);
    }
    return b.build();
  }
}
