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
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.inmemory.InMemoryOutputFile;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig.TimePartitioning;
import org.spatialingest.sink.commit.FileBatch;
import org.spatialingest.sink.commit.FileBatchSerializer;
import org.spatialingest.sink.commit.StoredBatch;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.RowBatch;
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
    assertThat(copy.createdAtMillis()).isEqualTo(3_000L);
    assertThat(filesOf(copy, 1)).hasSize(1);
    for (int i = 0; i < 2; i++) {
      ClosedFile in = batch.inline().files().get(i);
      ClosedFile out = copy.inline().files().get(i);
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

  /**
   * Version 2 (releases up to 99d1af5) held Java-serialized data files with only their spec id; a
   * restore reads them with the spec of that id from the table, not the table's current spec (here
   * evolved to id 1), and the batch can then be checkpointed again in today's format.
   */
  @Test
  void fileBatchReadsThePreviousReleasesJavaSerializedFilesWithTheSpecOfTheirId() throws Exception {
    DataFile a = dataFile("file:/w/a.parquet", 491_000, 1234, List.of(4L, 1_000_000L));
    PartitionSpec evolved =
        PartitionSpec.builderFor(TelemetryTable.SCHEMA).withSpecId(1).day("event_time").build();
    byte[] v2 = javaSerializedBatch(a);
    FileBatchSerializer serializer =
        new FileBatchSerializer(table -> Map.of(SPEC.specId(), SPEC, 1, evolved));
    FileBatch copy = serializer.deserialize(2, v2);
    assertThat(copy.checkpointId()).isEqualTo(42);
    assertThat(copy.positions()).isEqualTo(Map.of("t/0", 17L));
    ClosedFile out = copy.inline().files().get(0);
    assertThat(out.spec()).as("the spec of the file's id, not the current one").isEqualTo(SPEC);
    assertThat(out.reason()).isEqualTo(CloseReason.LATENCY);
    assertThat(out.ingestSecondCounts()).isEqualTo(Map.of(1_795_946_400L, 7L));
    assertThat(out.consumedStaging()).containsExactly("file:/w/_staging/x/1.rows");
    assertSameAppend(out.file(), a);
    // a restored committable that is not committed before the next checkpoint is written again
    FileBatch again = serializer.deserialize(serializer.getVersion(), serializer.serialize(copy));
    assertThat(again.inline().files().get(0).spec()).isEqualTo(SPEC);
    assertSameAppend(again.inline().files().get(0).file(), a);

    assertThatThrownBy(
            () -> new FileBatchSerializer(table -> Map.of(1, evolved)).deserialize(2, v2))
        .as("a spec id the table no longer has is named")
        .hasMessageContaining("file:/w/a.parquet")
        .hasMessageContaining("partition spec id " + SPEC.specId());
    assertThatThrownBy(() -> new FileBatchSerializer().deserialize(2, v2))
        .as("the serializer between operators has no tables")
        .hasMessageContaining("no tables at hand");
  }

  /** A version-2 batch of checkpoint 42 and lineage-1 with one Java-serialized file. */
  private static byte[] javaSerializedBatch(DataFile a) throws java.io.IOException {
    DataOutputSerializer v2 = new DataOutputSerializer(4096);
    v2.writeLong(42);
    v2.writeUTF("lineage-1");
    v2.writeInt(1);
    v2.writeInt(0);
    byte[] file = InstantiationUtil.serializeObject(a);
    v2.writeInt(file.length);
    v2.write(file);
    writeOneLatencyFileTail(v2);
    return v2.getCopyOfBuffer();
  }

  private static List<ClosedFile> filesOf(FileBatch batch, int table) {
    return batch.inline().files().stream().filter(f -> f.table() == table).toList();
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
    assertThat(copy.receivedEnds()).isEqualTo(report.receivedEnds());
    assertThat(copy.buffered()).isEqualTo(report.buffered());
    assertThat(copy.closed().locations()).containsExactly("file:/w/c.parquet");
    assertThat(copy.closed().files().get(0).consumedStaging()).containsExactly("s1", "s2");
    assertSameAppend(copy.closed().files().get(0).file(), f.file());
  }

  /**
   * The aggregator and the committer pass the writers' groups on as the bytes they were encoded as:
   * a batch of two reports' files serializes to those bytes, and reads back every field.
   */
  @Test
  void closedFilesTravelAsTheBytesTheWriterEncoded() throws Exception {
    ClosedFile a =
        new ClosedFile(
            0,
            dataFile("file:/w/a.parquet", 491_000, 5, List.of(4L)),
            SPEC,
            CloseReason.BYTES,
            10,
            1,
            2,
            3,
            Map.of(1_795_946_400L, 5L),
            List.of("s1"));
    ClosedFile b =
        new ClosedFile(
            1,
            unpartitionedFile("file:/r/b.parquet", 2),
            PartitionSpec.unpartitioned(),
            CloseReason.LATENCY,
            4,
            1,
            2,
            3,
            Map.of(),
            List.of());
    WriterReportSerializer reports = new WriterReportSerializer();
    byte[] first =
        reports.serialize(new WriterReport("w1", List.of(a), Map.of("t/0", 9L), Map.of()));
    byte[] second = reports.serialize(new WriterReport("w2", List.of(b), Map.of(), Map.of()));
    WriterReport r1 = reports.deserialize(reports.getVersion(), first);
    WriterReport r2 = reports.deserialize(reports.getVersion(), second);

    FileBatch batch =
        new FileBatch(7, "l", ClosedFiles.concat(List.of(r1.closed(), r2.closed())), Map.of());
    assertThat(batch.inline().locations())
        .containsExactly("file:/w/a.parquet", "file:/r/b.parquet");
    FileBatchSerializer serializer = new FileBatchSerializer();
    byte[] serialized = serializer.serialize(batch);
    assertThat(indexOf(serialized, groupBytes(r1.closed()))).isPositive();
    assertThat(indexOf(serialized, groupBytes(r2.closed()))).isPositive();

    FileBatch copy = serializer.deserialize(serializer.getVersion(), serialized);
    assertThat(serializer.serialize(copy)).isEqualTo(serialized);
    assertThat(copy.inline().files()).hasSize(2);
    assertThat(filesOf(copy, 1).get(0).reason()).isEqualTo(CloseReason.LATENCY);
    assertThat(filesOf(copy, 0).get(0).ingestSecondCounts()).isEqualTo(a.ingestSecondCounts());
    assertThat(filesOf(copy, 0).get(0).spec()).isEqualTo(SPEC);
    assertSameAppend(filesOf(copy, 0).get(0).file(), a.file());
    assertSameAppend(filesOf(copy, 1).get(0).file(), b.file());
    assertThat(copy.batchId()).isEqualTo(new FileBatch(7, "l", List.of(b, a), Map.of()).batchId());
  }

  /**
   * What the aggregator emits (version 5): a reference to the batch's files in storage. The
   * committable stays small, names the batch as the files would (same id), and the files read back
   * with every field; once the file is gone, reading it says which batch and what to do.
   */
  @Test
  void aStoredBatchTravelsAsAReferenceAndItsFilesReadBack(@TempDir java.nio.file.Path dir)
      throws Exception {
    ClosedFile a = closedFile("file:/w/a.parquet", 0, 3_000L);
    ClosedFile b = closedFile("file:/w/b.parquet", 1, 2_000L);
    HadoopFileIO io = new HadoopFileIO(new org.apache.hadoop.conf.Configuration());
    String location = dir.resolve("0000000000000000007-t.batch").toUri().toString();
    // as the aggregator has them: the groups' bytes as the writers encoded them
    DataOutputSerializer encoded = new DataOutputSerializer(4096);
    ClosedFiles.of(List.of(a, b)).write(encoded);
    ClosedFiles received =
        ClosedFiles.read(
            new org.apache.flink.core.memory.DataInputDeserializer(encoded.getCopyOfBuffer()));
    StoredBatch stored = StoredBatch.write(io, location, received);
    FileBatch batch = new FileBatch(7, "l", stored, Map.of("t/0", 17L));
    FileBatchSerializer serializer = new FileBatchSerializer();
    byte[] serialized = serializer.serialize(batch);
    assertThat(serialized.length).as("a reference, not the files").isLessThan(300);

    FileBatch copy = serializer.deserialize(serializer.getVersion(), serialized);
    assertThat(copy.stored()).isEqualTo(stored);
    assertThat(copy.positions()).isEqualTo(Map.of("t/0", 17L));
    assertThat(copy.fileCount()).isEqualTo(2);
    assertThat(copy.createdAtMillis()).isEqualTo(2_000L);
    assertThat(copy.batchId()).isEqualTo(new FileBatch(7, "l", List.of(b, a), Map.of()).batchId());
    List<ClosedFile> files = copy.closed(io).files();
    assertThat(files).extracting(ClosedFile::table).containsExactly(0, 1);
    assertThat(files.get(0).consumedStaging()).isEqualTo(a.consumedStaging());
    assertSameAppend(files.get(0).file(), a.file());
    assertSameAppend(files.get(1).file(), b.file());

    io.deleteFile(location);
    assertThatThrownBy(() -> copy.closed(io))
        .hasMessageContaining("pending batch " + stored.batchId())
        .hasMessageContaining("are gone from " + location);
  }

  /**
   * Version 4 (builds up to b0e0565): the files inline; such a batch stays inline if written again.
   */
  @Test
  void fileBatchReadsVersion4() throws Exception {
    ClosedFile a = closedFile("file:/w/a.parquet", 0, 3_000L);
    DataOutputSerializer v4 = new DataOutputSerializer(4096);
    v4.writeLong(42);
    v4.writeUTF("lineage-1");
    ClosedFiles.of(List.of(a)).write(v4);
    v4.writeInt(1);
    v4.writeUTF("t/0");
    v4.writeLong(17L);
    FileBatchSerializer serializer = new FileBatchSerializer();
    FileBatch copy = serializer.deserialize(4, v4.getCopyOfBuffer());
    assertThat(copy.stored()).isNull();
    assertThat(copy.positions()).isEqualTo(Map.of("t/0", 17L));
    assertSameAppend(copy.inline().files().get(0).file(), a.file());
    FileBatch again = serializer.deserialize(serializer.getVersion(), serializer.serialize(copy));
    assertThat(again.stored()).isNull();
    assertSameAppend(again.inline().files().get(0).file(), a.file());
    assertThat(again.batchId()).isEqualTo(copy.batchId());
  }

  private static ClosedFile closedFile(String location, int table, long closedAt) {
    return new ClosedFile(
        table,
        table == 0 ? dataFile(location, 491_000, 5, List.of(4L)) : unpartitionedFile(location, 2),
        table == 0 ? SPEC : PartitionSpec.unpartitioned(),
        CloseReason.LATENCY,
        10,
        1,
        2,
        closedAt,
        Map.of(1_795_946_400L, 5L),
        List.of("s-" + table));
  }

  /** Version 3 (builds up to 5e92675): the manifests first, then the sink's fields per group. */
  @Test
  void fileBatchReadsVersion3() throws Exception {
    DataFile a = dataFile("file:/w/a.parquet", 491_000, 1234, List.of(4L, 1_000_000L));
    DataOutputSerializer v3 = new DataOutputSerializer(4096);
    v3.writeLong(42);
    v3.writeUTF("lineage-1");
    v3.writeInt(1);
    v3.writeInt(0);
    InMemoryOutputFile manifestOut = new InMemoryOutputFile("memory:/closed-files.avro");
    ManifestWriter<DataFile> writer = ManifestFiles.write(2, SPEC, manifestOut, 0L);
    try (writer) {
      writer.add(a);
    }
    byte[] descriptor = ManifestFiles.encode(writer.toManifestFile());
    v3.writeInt(descriptor.length);
    v3.write(descriptor);
    byte[] manifest = manifestOut.toByteArray();
    v3.writeInt(manifest.length);
    v3.write(manifest);
    v3.writeInt(1);
    writeOneLatencyFileTail(v3);
    FileBatchSerializer serializer = new FileBatchSerializer();
    FileBatch copy = serializer.deserialize(3, v3.getCopyOfBuffer());
    assertThat(copy.checkpointId()).isEqualTo(42);
    assertThat(copy.positions()).isEqualTo(Map.of("t/0", 17L));
    ClosedFile out = copy.inline().files().get(0);
    assertThat(out.reason()).isEqualTo(CloseReason.LATENCY);
    assertThat(out.spec()).isEqualTo(SPEC);
    assertThat(out.consumedStaging()).containsExactly("file:/w/_staging/x/1.rows");
    assertSameAppend(out.file(), a);
    // a restored committable that is not committed before the next checkpoint is written again
    FileBatch again = serializer.deserialize(serializer.getVersion(), serializer.serialize(copy));
    assertSameAppend(again.inline().files().get(0).file(), a);
    assertThat(again.batchId()).isEqualTo(copy.batchId());
  }

  private static byte[] groupBytes(ClosedFiles files) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(1024);
    files.write(out);
    byte[] all = out.getCopyOfBuffer();
    return java.util.Arrays.copyOfRange(all, 8, all.length); // one group: count, length, bytes
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      if (java.util.Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
        return i;
      }
    }
    return -1;
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
                new WriterState.StagedRun(0, 3, "file:/t/_staging/s/1.rows", 12, true),
                new WriterState.StagedRun(0, 3, "file:/t/_staging/s/3.rows", 5, false),
                new WriterState.StagedRun(1, 0, "file:/r/_staging/s/2.rows", 1)));
    WriterStateSerializer serializer = new WriterStateSerializer();
    WriterState copy = serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
    assertThat(copy.runs()).isEqualTo(state.runs());
    assertThat(copy.runs().get(0).parked()).isTrue();

    org.apache.flink.core.memory.DataOutputSerializer v3 =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    v3.writeInt(1);
    v3.writeInt(0);
    v3.writeInt(3);
    v3.writeUTF("file:/t/_staging/s/1.rows");
    v3.writeLong(12);
    assertThat(serializer.deserialize(3, v3.getCopyOfBuffer()).runs())
        .as("v3: nothing parked")
        .containsExactly(new WriterState.StagedRun(0, 3, "file:/t/_staging/s/1.rows", 12, false));

    org.apache.flink.core.memory.DataOutputSerializer v2 =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    v2.writeInt(1);
    v2.writeInt(1);
    v2.writeUTF("file:/r/_staging/s/2.rows");
    v2.writeLong(7);
    assertThat(serializer.deserialize(2, v2.getCopyOfBuffer()).runs())
        .containsExactly(new WriterState.StagedRun(1, 0, "file:/r/_staging/s/2.rows", 7));

    // version 1: the rows inline, each as length and its serializer form (the binary row's
    // length, then the row); read as one input batch of the primary table, rows as they were
    byte[] row1 = {0, 0, 0, 3, 1, 2, 3};
    byte[] row2 = {0, 0, 0, 0};
    org.apache.flink.core.memory.DataOutputSerializer v1 =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    v1.writeInt(2);
    v1.writeInt(row1.length);
    v1.write(row1);
    v1.writeInt(row2.length);
    v1.write(row2);
    WriterState inline = serializer.deserialize(1, v1.getCopyOfBuffer());
    assertThat(inline.runs()).isEmpty();
    assertThat(inline.unstaged()).hasSize(1);
    RowBatch batch = inline.unstaged().get(0);
    assertThat(batch.table()).isEqualTo(0);
    assertThat(batch.bufferId()).isEqualTo(0);
    assertThat(batch.specId()).as("not grouped by partition").isEqualTo(RowBatch.NOT_GROUPED);
    assertThat(batch.rows()).containsExactly(0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0);
    assertThatThrownBy(() -> serializer.serialize(inline))
        .as("a snapshot holds only runs")
        .hasMessageContaining("only runs");

    org.apache.flink.core.memory.DataOutputSerializer broken =
        new org.apache.flink.core.memory.DataOutputSerializer(64);
    broken.writeInt(1);
    broken.writeInt(3);
    broken.write(new byte[] {1, 2, 3});
    assertThatThrownBy(() -> serializer.deserialize(1, broken.getCopyOfBuffer()))
        .hasMessageContaining("not a serialized row");
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

  /**
   * The part of a version 2 or 3 batch after its one file: close reason, rows, ingest times,
   * partition, staging runs consumed, and the positions ({@code t/0} at 17).
   */
  private static void writeOneLatencyFileTail(DataOutputSerializer out) throws java.io.IOException {
    out.writeUTF("LATENCY");
    out.writeLong(99);
    out.writeLong(1_000L);
    out.writeLong(2_000L);
    out.writeLong(3_000L);
    out.writeInt(1);
    out.writeLong(1_795_946_400L);
    out.writeLong(7L);
    out.writeInt(1);
    out.writeUTF("file:/w/_staging/x/1.rows");
    out.writeInt(1);
    out.writeUTF("t/0");
    out.writeLong(17L);
  }
}
