package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.util.InstantiationUtil;
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
import org.spatialingest.config.JobConfig.TimePartitioning;
import org.spatialingest.sink.commit.FileBatch;
import org.spatialingest.sink.commit.FileBatchSerializer;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.core.WriterReportSerializer;
import org.spatialingest.sink.write.WriterState;
import org.spatialingest.sink.write.WriterStateSerializer;
import org.spatialingest.table.TelemetryTable;

class SerializerRoundTripTest {
  private static final PartitionSpec SPEC = TelemetryTable.partitionSpec(TimePartitioning.HOUR);
  private static final SortOrder ORDER =
      SortOrder.builderFor(TelemetryTable.SCHEMA).withOrderId(1).asc("hilbert").build();

  @Test
  void fileBatchKeepsEveryFieldAnAppendNeeds() throws Exception {
    DataFile a = dataFile("file:/w/a.parquet", 491_000, 1234, List.of(4L, 1_000_000L));
    DataFile b = unpartitionedFile("file:/r/b.parquet", 7);
    ClosedFile fa =
        new ClosedFile(
            0,
            a,
            SPEC,
            CloseReason.BYTES,
            99_999,
            1_000L,
            2_000L,
            3_000L,
            Map.of(1_795_946_400L, 7L, 1_795_946_401L, 3L),
            List.of("file:/w/_staging/x/1.rows"));
    ClosedFile fb =
        new ClosedFile(
            1,
            b,
            PartitionSpec.unpartitioned(),
            CloseReason.END_OF_INPUT,
            5,
            1_500L,
            2_500L,
            3_500L,
            Map.of(),
            List.of());
    FileBatch batch =
        new FileBatch(
            42, "lineage-1", List.of(fa, fb), Map.of("t/0", 17L, "file:/in/a.ndjson", 3L));
    FileBatchSerializer serializer = new FileBatchSerializer();
    FileBatch copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(batch));

    assertThat(copy.checkpointId()).isEqualTo(42);
    assertThat(copy.lineage()).isEqualTo("lineage-1");
    assertThat(copy.positions()).isEqualTo(batch.positions());
    assertThat(copy.minIngestMillis()).isEqualTo(1_000L);
    assertThat(copy.maxIngestMillis()).isEqualTo(2_500L);
    assertThat(copy.createdAtMillis()).isEqualTo(3_000L);
    assertThat(copy.filesOf(1)).hasSize(1);
    for (int i = 0; i < 2; i++) {
      ClosedFile in = batch.files().get(i);
      ClosedFile out = copy.files().get(i);
      assertThat(out.table()).isEqualTo(in.table());
      assertThat(out.reason()).isEqualTo(in.reason());
      assertThat(out.bufferedBytes()).isEqualTo(in.bufferedBytes());
      assertThat(out.ingestSecondCounts()).isEqualTo(in.ingestSecondCounts());
      assertThat(out.consumedStaging()).isEqualTo(in.consumedStaging());
      assertThat(out.spec()).isEqualTo(in.spec());
      assertSameAppend(out.file(), in.file());
    }
    assertThat(copy.batchId()).isEqualTo(batch.batchId());
  }

  /** Version 2 (releases up to 99d1af5) held Java-serialized data files; a restore reads it. */
  @Test
  void fileBatchReadsThePreviousReleasesJavaSerializedFiles() throws Exception {
    DataFile a = dataFile("file:/w/a.parquet", 491_000, 1234, List.of(4L, 1_000_000L));
    DataOutputSerializer v2 = new DataOutputSerializer(4096);
    v2.writeLong(42);
    v2.writeUTF("lineage-1");
    v2.writeInt(1);
    v2.writeInt(0);
    byte[] file = InstantiationUtil.serializeObject(a);
    v2.writeInt(file.length);
    v2.write(file);
    v2.writeUTF("LATENCY");
    v2.writeLong(99);
    v2.writeLong(1_000L);
    v2.writeLong(2_000L);
    v2.writeLong(3_000L);
    v2.writeInt(1);
    v2.writeLong(1_795_946_400L);
    v2.writeLong(7L);
    v2.writeInt(1);
    v2.writeUTF("file:/w/_staging/x/1.rows");
    v2.writeInt(1);
    v2.writeUTF("t/0");
    v2.writeLong(17L);
    FileBatch copy = new FileBatchSerializer().deserialize(2, v2.getCopyOfBuffer());
    assertThat(copy.checkpointId()).isEqualTo(42);
    assertThat(copy.positions()).isEqualTo(Map.of("t/0", 17L));
    ClosedFile out = copy.files().get(0);
    assertThat(out.reason()).isEqualTo(CloseReason.LATENCY);
    assertThat(out.ingestSecondCounts()).isEqualTo(Map.of(1_795_946_400L, 7L));
    assertThat(out.consumedStaging()).containsExactly("file:/w/_staging/x/1.rows");
    assertSameAppend(out.file(), a);
  }

  /** Every field of a data file that an append writes into the table's manifest. */
  private static void assertSameAppend(DataFile out, DataFile in) {
    assertThat(out.location()).isEqualTo(in.location());
    assertThat(out.format()).isEqualTo(in.format());
    assertThat(out.specId()).isEqualTo(in.specId());
    assertThat(out.partition().size()).isEqualTo(in.partition().size());
    for (int p = 0; p < in.partition().size(); p++) {
      assertThat(out.partition().get(p, Object.class))
          .isEqualTo(in.partition().get(p, Object.class));
    }
    assertThat(out.recordCount()).isEqualTo(in.recordCount());
    assertThat(out.fileSizeInBytes()).isEqualTo(in.fileSizeInBytes());
    assertThat(out.columnSizes()).isEqualTo(in.columnSizes());
    assertThat(out.valueCounts()).isEqualTo(in.valueCounts());
    assertThat(out.nullValueCounts()).isEqualTo(in.nullValueCounts());
    assertThat(out.nanValueCounts()).isEqualTo(in.nanValueCounts());
    assertThat(out.lowerBounds()).isEqualTo(in.lowerBounds());
    assertThat(out.upperBounds()).isEqualTo(in.upperBounds());
    assertThat(out.splitOffsets()).isEqualTo(in.splitOffsets());
    assertThat(out.sortOrderId()).isEqualTo(in.sortOrderId());
  }

  @Test
  void writerReportRoundTrips() throws Exception {
    ClosedFile f =
        new ClosedFile(
            0,
            dataFile("file:/w/c.parquet", 491_000, 3, null),
            SPEC,
            CloseReason.LATENCY,
            10,
            1,
            2,
            3,
            Map.of(),
            List.of("s1", "s2"));
    WriterReport report =
        new WriterReport("tok", List.of(f), Map.of("t/1", 10L), Map.of("t/1", 4L));
    WriterReportSerializer serializer = new WriterReportSerializer();
    WriterReport copy =
        serializer.deserialize(serializer.getVersion(), serializer.serialize(report));
    assertThat(copy.writerToken()).isEqualTo("tok");
    assertThat(copy.seen()).isEqualTo(report.seen());
    assertThat(copy.buffered()).isEqualTo(report.buffered());
    assertThat(copy.closed().get(0).consumedStaging()).containsExactly("s1", "s2");
    assertSameAppend(copy.closed().get(0).file(), f.file());
  }

  @Test
  void unknownVersionsAreRefused() {
    assertThatThrownBy(() -> new FileBatchSerializer().deserialize(99, new byte[0]))
        .hasMessageContaining("99");
    assertThatThrownBy(() -> new WriterStateSerializer().deserialize(99, new byte[4]))
        .hasMessageContaining("99");
  }

  @Test
  void writerStateRoundTripsAndReadsEarlierVersions() throws Exception {
    WriterState state =
        new WriterState(
            List.of(
                new WriterState.StagedRun(0, 3, "file:/t/_staging/s/1.rows", 12),
                new WriterState.StagedRun(1, 0, "file:/r/_staging/s/2.rows", 1)),
            List.of());
    WriterStateSerializer serializer = new WriterStateSerializer();
    WriterState copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
    assertThat(copy.runs()).isEqualTo(state.runs());

    org.apache.flink.core.memory.DataOutputSerializer v2 =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    v2.writeInt(1);
    v2.writeInt(1);
    v2.writeUTF("file:/r/_staging/s/2.rows");
    v2.writeLong(7);
    assertThat(serializer.deserialize(2, v2.getCopyOfBuffer()).runs())
        .containsExactly(new WriterState.StagedRun(1, 0, "file:/r/_staging/s/2.rows", 7));

    org.apache.flink.core.memory.DataOutputSerializer v1 =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    v1.writeInt(2);
    v1.writeInt(3);
    v1.write(new byte[] {1, 2, 3});
    v1.writeInt(0);
    WriterState legacy = serializer.deserialize(1, v1.getCopyOfBuffer());
    assertThat(legacy.runs()).isEmpty();
    assertThat(legacy.legacyRows()).hasSize(2);
    assertThat(legacy.legacyRows().get(0)).containsExactly(1, 2, 3);
  }

  private static DataFile unpartitionedFile(String path, long rows) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(rows * 100)
        .withRecordCount(rows)
        .build();
  }

  private static DataFile dataFile(String path, int hour, long rows, List<Long> splits) {
    PartitionData partition = new PartitionData(SPEC.partitionType());
    partition.set(0, hour);
    ByteBuffer lower = Conversions.toByteBuffer(Types.DoubleType.get(), -12.5);
    ByteBuffer upper = Conversions.toByteBuffer(Types.DoubleType.get(), 44.25);
    DataFiles.Builder b =
        DataFiles.builder(SPEC)
            .withPath(path)
            .withFormat(FileFormat.PARQUET)
            .withPartition(partition)
            .withFileSizeInBytes(rows * 100)
            .withMetrics(
                new Metrics(
                    rows,
                    Map.of(6, 10L),
                    Map.of(6, rows),
                    Map.of(6, 0L),
                    Map.of(6, 0L),
                    Map.of(6, lower),
                    Map.of(6, upper)))
            .withSortOrder(ORDER);
    if (splits != null) {
      b.withSplitOffsets(splits);
    }
    return b.build();
  }
}
