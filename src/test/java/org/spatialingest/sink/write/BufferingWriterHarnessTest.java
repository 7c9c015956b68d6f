package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;
import static org.spatialingest.sink.SinkHarnesses.feed;
import static org.spatialingest.sink.SinkHarnesses.key;
import static org.spatialingest.sink.SinkHarnesses.rows;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.types.Either;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.LogCapture;
import org.spatialingest.TestKit;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.table.TelemetryTable;

/**
 * The writer ({@link BufferingWriter}) as Flink runs it, in {@code SinkWriterOperator} inside
 * Flink's operator test harness, writing real Parquet files and staging runs into a real Hadoop
 * table: every close reason, what a barrier's report and state hold, and a restore from staging
 * runs. Asserts on the reports the operator emits and the files it wrote.
 */
class BufferingWriterHarnessTest {
  private static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  private SinkHarnesses sink(Map<String, String> settings) {
    return new SinkHarnesses(dir, settings);
  }

  /** The reports a barrier released (the writer operator emits them before the barrier). */
  private static WriterReport barrier(
      OneInputStreamOperatorTestHarness<?, CommittableMessage<WriterReport>> writer, long id)
      throws Exception {
    writer.prepareSnapshotPreBarrier(id);
    List<WriterReport> reports = SinkHarnesses.drain(writer);
    assertThat(reports).as("one report per barrier").hasSize(1);
    return reports.get(0);
  }

  private static Set<String> ids(Table table, List<ClosedFile> files) throws Exception {
    Set<String> ids = new HashSet<>();
    for (ClosedFile f : files) {
      long previousKey = Long.MIN_VALUE;
      try (CloseableIterable<Record> rows = TestKit.fileRows(table, f.file())) {
        for (Record r : rows) {
          assertThat(ids.add((String) r.getField("id"))).as("no row twice").isTrue();
          long key = (Long) r.getField("hilbert");
          assertThat(key)
              .as("a file is sorted by its Hilbert key")
              .isGreaterThanOrEqualTo(previousKey);
          previousKey = key;
        }
      }
    }
    return ids;
  }

  private static long rowsIn(List<ClosedFile> files) {
    return files.stream().mapToLong(f -> f.file().recordCount()).sum();
  }

  private static List<String> idsOf(List<Either<RowData, RowData>> rows) {
    return rows.stream().map(r -> r.left().getString(0).toString()).toList();
  }

  @Test
  void bytesCloseABufferAtTAndTheBarrierReportsItsFileWithThePositions() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.target-file-size", "40KB", "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input = rows(1, 1_000, 0, 0, DAY_1, System.currentTimeMillis());
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      WriterReport report = barrier(writer, 1);
      List<ClosedFile> files = report.closed().files();
      assertThat(files).isNotEmpty();
      assertThat(files).extracting(ClosedFile::reason).containsOnly(CloseReason.BYTES);
      // files close in arrival order, so the rows still buffered are the newest ones
      long closedRows = rowsIn(files);
      assertThat(closedRows).isLessThan(1_000);
      assertThat(report.receivedEnds()).isEqualTo(Map.of(key(0), 1_000L));
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), closedRows));
      assertThat(ids(s.table(), files)).hasSize((int) closedRows);
      for (ClosedFile f : files) {
        assertThat(f.bufferedBytes())
            .as("a bytes close happens at T")
            .isGreaterThanOrEqualTo(40_000);
        assertThat(f.consumedStaging()).as("closed before any barrier: no staging run").isEmpty();
      }
    }
  }

  @Test
  void memoryClosesTheLargestBufferWhenTheWriterHoldsM() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.memory-budget", "60KB", "sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> small = rows(2, 20, 0, 0, DAY_1 + 24 * HOUR, now);
    List<Either<RowData, RowData>> big = rows(1, 400, 0, 20, DAY_1, now);
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, small);
      feed(writer, big);
      WriterReport report = barrier(writer, 1);
      List<ClosedFile> files = report.closed().files();
      assertThat(files).extracting(ClosedFile::reason).containsOnly(CloseReason.MEMORY);
      // the larger day closed; the smaller one is still buffered from its first offset
      assertThat(ids(s.table(), files)).isSubsetOf(idsOf(big));
      assertThat(files).allSatisfy(f -> assertThat(f.bufferedBytes()).isLessThanOrEqualTo(60_000));
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), 0L));
    }
  }

  /** Rows far wider than usual (2,000-vertex polygons, ~32 KB each) still close files by M. */
  @Test
  void widePolygonsCloseFilesByMemoryAndNoFileHoldsMoreThanMPlusOneRow() throws Exception {
    SinkHarnesses s =
        sink(
            Map.of(
                "sink.memory-budget", "100KB",
                "sink.target-file-size", "1GB",
                "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input =
        SinkHarnesses.rows(
            new TelemetryGenerator(13, 5, 4, 2_000), 40, 0, 0, DAY_1, System.currentTimeMillis());
    List<ClosedFile> files = new ArrayList<>();
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      files.addAll(barrier(writer, 1).closed().files());
      writer.endInput();
      SinkHarnesses.drain(writer).forEach(r -> files.addAll(r.closed().files()));
    }
    assertThat(files.stream().filter(f -> f.reason() == CloseReason.MEMORY))
        .hasSizeGreaterThanOrEqualTo(2);
    long widestRow = 40_000;
    assertThat(files)
        .allSatisfy(f -> assertThat(f.bufferedBytes()).isLessThanOrEqualTo(100_000 + widestRow));
    assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
  }

  /**
   * Past the open limit the least recently written buffer is parked, not closed: at end of input
   * each partition is one file, none closed by the limit.
   */
  @Test
  void pastTheOpenLimitTheLeastRecentlyWrittenPartitionIsParked() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-open-partitions", "1", "sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> input = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      input.addAll(rows(1, 10, 0, 20 * round, DAY_1, now));
      input.addAll(rows(2, 10, 0, 20 * round + 10, DAY_1 + 24 * HOUR, now));
    }
    List<ClosedFile> files = new ArrayList<>();
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      files.addAll(barrier(writer, 1).closed().files());
      writer.endInput();
      SinkHarnesses.drain(writer).forEach(r -> files.addAll(r.closed().files()));
    }
    assertThat(files).extracting(ClosedFile::reason).containsOnly(CloseReason.END_OF_INPUT);
    assertThat(files).hasSize(2);
    assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
  }

  @Test
  void partitionLimitClosesTheLeastRecentlyWrittenPartition() throws Exception {
    SinkHarnesses s =
        sink(
            Map.of(
                "sink.max-open-partitions", "1",
                "sink.max-parked-partitions", "0",
                "sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> first = rows(1, 10, 0, 0, DAY_1, now);
    List<Either<RowData, RowData>> second = rows(2, 10, 0, 10, DAY_1 + 24 * HOUR, now);
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, first);
      feed(writer, second);
      WriterReport report = barrier(writer, 1);
      List<ClosedFile> files = report.closed().files();
      assertThat(files).extracting(ClosedFile::reason).containsExactly(CloseReason.PARTITION_LIMIT);
      assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(first));
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), 10L));
    }
  }

  /**
   * Late rows of 11 earlier days among today's with at most 3 open partitions: the least recently
   * written closes, and every row is in a file once, per day.
   */
  @Test
  void lateRowsOfManyDaysKeepAtMostTheOpenPartitionLimit() throws Exception {
    SinkHarnesses s =
        sink(
            Map.of(
                "sink.max-open-partitions", "3",
                "sink.max-parked-partitions", "0",
                "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input = rows(1, 1_000, 0, 0, DAY_1, System.currentTimeMillis());
    for (int i = 49; i < input.size(); i += 50) {
      long day = DAY_1 - (1 + (i / 50) % 11) * 24 * HOUR;
      ((org.apache.flink.table.data.GenericRowData) input.get(i).left())
          .setField(TelemetryTable.EVENT_TIME, TimestampData.fromEpochMillis(day));
    }
    List<ClosedFile> files = new ArrayList<>();
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      files.addAll(barrier(writer, 1).closed().files());
      writer.endInput();
      SinkHarnesses.drain(writer).forEach(r -> files.addAll(r.closed().files()));
    }
    assertThat(files.stream().filter(f -> f.reason() == CloseReason.PARTITION_LIMIT)).isNotEmpty();
    assertThat(files.stream().map(f -> f.file().partition().get(0, Integer.class)).distinct())
        .hasSize(12);
    assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
  }

  @Test
  void latencyClosesAtTheBarrierWhatWouldBeOlderThanLAndKeepsFreshRows() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-latency", "10min"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> old = rows(1, 30, 0, 0, DAY_1, now - HOUR);
    List<Either<RowData, RowData>> fresh = rows(2, 30, 1, 0, DAY_1 + 24 * HOUR, now);
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, old);
      feed(writer, fresh);
      assertThat(SinkHarnesses.drain(writer)).as("nothing closes between barriers").isEmpty();
      WriterReport report = barrier(writer, 1);
      List<ClosedFile> files = report.closed().files();
      assertThat(files).extracting(ClosedFile::reason).containsExactly(CloseReason.LATENCY);
      assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(old));
      assertThat(files.get(0).minIngestMillis()).isEqualTo(now - HOUR);
      assertThat(report.receivedEnds()).isEqualTo(Map.of(key(0), 30L, key(1), 30L));
      assertThat(report.buffered())
          .as("only the fresh partition still buffers")
          .isEqualTo(Map.of(key(1), 0L));
    }
  }

  /**
   * Rows whose Kafka timestamp is already an hour old when they arrive (a producer that stamps the
   * event time) close by L at every barrier; once that has lasted 2 L the writer says so, with the
   * cause and the topic setting. Rows that arrive fresh and close by L warn nothing.
   */
  @Test
  void rowsOlderThanLOnArrivalAtEveryBarrierAreReportedOnce() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-latency", "200ms", "checkpoint.interval", "100ms"));
    StringWriter logs = new StringWriter();
    try (LogCapture capture = LogCapture.start(logs);
        var writer = s.writer(0, 1)) {
      writer.open();
      int lateBarriers = 0;
      for (int i = 1; i <= 3 * LateArrivalWarning.BARRIERS_WORTH_A_WARNING; i++) {
        long now = System.currentTimeMillis();
        feed(writer, rows(i, 5, 0, i * 5L, DAY_1, now - HOUR)); // an hour old on arrival
        assertThat(barrier(writer, i).closed().files())
            .extracting(ClosedFile::reason)
            .containsOnly(CloseReason.LATENCY);
        lateBarriers++;
        Thread.sleep(50); // barriers of late rows spanning more than 2 L
      }
      assertThat(lateBarriers).isGreaterThan(LateArrivalWarning.BARRIERS_WORTH_A_WARNING);
      assertThat(warnings(logs)).as(logs.toString()).hasSize(1);
      assertThat(warnings(logs).get(0))
          .contains("sink.max-latency")
          .contains("message.timestamp.type=LogAppendTime");
    }
    StringWriter freshLogs = new StringWriter();
    SinkHarnesses fresh =
        new SinkHarnesses(
            dir.resolve("fresh"),
            Map.of("sink.max-latency", "200ms", "checkpoint.interval", "100ms"));
    try (LogCapture capture = LogCapture.start(freshLogs);
        var writer = fresh.writer(0, 1)) {
      writer.open();
      int latencyCloses = 0;
      for (int i = 1; i <= 3 * LateArrivalWarning.BARRIERS_WORTH_A_WARNING; i++) {
        feed(writer, rows(i, 5, 0, i * 5L, DAY_1, System.currentTimeMillis()));
        Thread.sleep(120); // older than L - C at the barrier: a latency close of fresh rows
        latencyCloses +=
            (int)
                barrier(writer, i).closed().files().stream()
                    .filter(f -> f.reason() == CloseReason.LATENCY)
                    .count();
      }
      assertThat(latencyCloses).as("fresh rows closed by L too").isGreaterThan(10);
      assertThat(warnings(freshLogs)).as(freshLogs.toString()).isEmpty();
    }
  }

  private static List<String> warnings(StringWriter logs) {
    return logs.toString()
        .lines()
        .filter(l -> l.startsWith("WARN " + LateArrivalWarning.class.getName()))
        .toList();
  }

  @Test
  void everyCheckpointClosesEveryBufferAtEachBarrier() throws Exception {
    SinkHarnesses s =
        sink(Map.of("sink.close-policy", "every-checkpoint", "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input = rows(1, 40, 0, 0, DAY_1, System.currentTimeMillis());
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      WriterReport report = barrier(writer, 1);
      assertThat(report.closed().files())
          .extracting(ClosedFile::reason)
          .containsExactly(CloseReason.CHECKPOINT);
      assertThat(report.buffered()).isEmpty();
      assertThat(barrier(writer, 2).closed().isEmpty()).as("nothing new, nothing closed").isTrue();
    }
  }

  @Test
  void endOfInputClosesEverythingAndEmitsItAfterTheLastBarrier() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> input = new ArrayList<>(rows(1, 25, 0, 0, DAY_1, now));
    input.addAll(rows(2, 25, 0, 25, DAY_1 + 24 * HOUR, now));
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, input);
      assertThat(barrier(writer, 4).closed().isEmpty()).isTrue();
      writer.endInput();
      List<CommittableMessage<WriterReport>> messages = SinkHarnesses.drainMessages(writer);
      assertThat(messages).extracting(CommittableMessage::getCheckpointId).containsOnly(5L);
      List<WriterReport> reports = reports(messages);
      List<ClosedFile> files = reports.get(0).closed().files();
      assertThat(files)
          .extracting(ClosedFile::reason)
          .containsOnly(CloseReason.END_OF_INPUT)
          .hasSize(2);
      assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
      assertThat(reports.get(0).buffered()).isEmpty();
      assertThat(reports.get(0).complete() || reports.get(0).unbuffered().contains(key(0)))
          .as("the key left the buffers")
          .isTrue();
      assertThat(reports.get(0).receivedEnds())
          .as("received 50 was told at barrier 4 and has not grown")
          .isEmpty();
    }
  }

  /**
   * A partition's buffers on one writer (8 neighbouring key ranges, each well below T, their rows
   * arriving mixed) close at the end of input as the files their bytes need ({@link
   * ClosePolicy#filesFor}), cut in key order: fewer files than buffers, each about the same bytes,
   * their key spans disjoint and in order, and every row in exactly one of them.
   */
  @Test
  void neighbouringBuffersCloseAsFewFilesCutInKeyOrder() throws Exception {
    long target = 40_000;
    SinkHarnesses s =
        sink(Map.of("sink.target-file-size", Long.toString(target), "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input =
        new ArrayList<>(rows(1, 1_000, 0, 0, DAY_1, System.currentTimeMillis()));
    List<Either<RowData, RowData>> byKey = new ArrayList<>(input);
    byKey.sort(java.util.Comparator.comparingLong(r -> r.left().getLong(TelemetryTable.HILBERT)));
    int ranges = 8;
    List<List<Either<RowData, RowData>>> range = new ArrayList<>();
    for (int r = 0; r < ranges; r++) {
      range.add(byKey.subList(r * byKey.size() / ranges, (r + 1) * byKey.size() / ranges));
    }
    List<ClosedFile> files;
    try (var writer = s.batchWriter()) {
      writer.open();
      // batches of 25 rows, round robin over the ranges: every buffer fills at the same pace
      for (int from = 0; from < range.get(0).size(); from += 25) {
        for (int r = 0; r < ranges; r++) {
          List<Either<RowData, RowData>> rows = range.get(r);
          writer.processElement(
              new StreamRecord<>(s.batch(rows.subList(from, Math.min(rows.size(), from + 25)), r)));
        }
      }
      assertThat(barrier(writer, 1).closed().isEmpty()).as("no buffer reached T").isTrue();
      writer.endInput();
      files = closedFiles(SinkHarnesses.drainMessages(writer));
    }
    long bytes = files.stream().mapToLong(ClosedFile::bufferedBytes).sum();
    assertThat(bytes).as("T's buffered bytes, at ratio 1").isGreaterThan(3 * target);
    assertThat(files.size())
        .as("%s buffered bytes at T = %s, %s buffers", bytes, target, ranges)
        .isEqualTo(ClosePolicy.filesFor(bytes, target))
        .isLessThan(ranges);
    assertThat(files).extracting(ClosedFile::reason).containsOnly(CloseReason.END_OF_INPUT);
    assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
    long previousMax = Long.MIN_VALUE;
    for (ClosedFile f : files) {
      assertThat(f.bufferedBytes())
          .as("bytes / files, give or take a third (a cut moves to a gap between keys)")
          .isBetween(bytes / files.size() / 3, bytes * 5 / files.size() / 3);
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      try (CloseableIterable<Record> rows = TestKit.fileRows(s.table(), f.file())) {
        for (Record r : rows) {
          min = Math.min(min, (Long) r.getField("hilbert"));
          max = Math.max(max, (Long) r.getField("hilbert"));
        }
      }
      assertThat(min).as("key spans disjoint, in order").isGreaterThan(previousMax);
      previousMax = max;
    }
  }

  /**
   * Small files do not teach the encoded ratio: a day closes files by T (the ratio learned from
   * them), then 12 days of 3 rows each close by L (files that are mostly Parquet footer, at a ratio
   * many times higher), then a day of about 3/4 of T's bytes closes at the end of input: one file,
   * as its bytes need, not cut into small files by a ratio the small files raised ({@code
   * ParkedBackfillTest}'s restore case once got two files under T/2 in a day so).
   */
  @Test
  void smallFilesDoNotRaiseTheRatioALaterCloseIsCutBy() throws Exception {
    long target = 32 * 1024;
    long day = 24 * HOUR;
    SinkHarnesses s =
        sink(
            Map.of(
                "sink.target-file-size", Long.toString(target),
                "sink.max-latency", "10min",
                "sink.max-open-partitions", "32"));
    long now = System.currentTimeMillis();
    List<ClosedFile> files = new ArrayList<>();
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, rows(1, 400, 0, 0, DAY_1, now));
      List<ClosedFile> full = barrier(writer, 1).closed().files();
      assertThat(full).extracting(ClosedFile::reason).contains(CloseReason.BYTES);
      ClosedFile last = full.get(full.size() - 1);
      double ratio = last.file().fileSizeInBytes() / (double) last.bufferedBytes();
      double bytesPerRow = last.bufferedBytes() / (double) last.file().recordCount();
      long offset = 400;
      for (int d = 1; d <= 12; d++) {
        feed(writer, rows(10 + d, 3, 0, offset, DAY_1 + d * day, now - HOUR));
        offset += 3;
      }
      List<ClosedFile> small = barrier(writer, 2).closed().files();
      assertThat(small)
          .hasSize(12)
          .extracting(ClosedFile::reason)
          .containsOnly(CloseReason.LATENCY);
      assertThat(small.get(0).file().fileSizeInBytes() / (double) small.get(0).bufferedBytes())
          .as("a small file's ratio")
          .isGreaterThan(2 * ratio);
      int rows = (int) (0.75 * target / ratio / bytesPerRow);
      feed(writer, rows(99, rows, 0, offset, DAY_1 + 20 * day, now));
      writer.endInput();
      SinkHarnesses.drain(writer).forEach(r -> files.addAll(r.closed().files()));
    }
    int lastDay = (int) Math.floorDiv(DAY_1 + 20 * day, day);
    List<ClosedFile> ofLastDay =
        files.stream().filter(f -> f.file().partition().get(0, Integer.class) == lastDay).toList();
    assertThat(ofLastDay)
        .as(
            "buffered -> file bytes of the last day's files: %s",
            ofLastDay.stream()
                .map(f -> f.bufferedBytes() + " -> " + f.file().fileSizeInBytes())
                .toList())
        .hasSize(1)
        .extracting(ClosedFile::reason)
        .containsExactly(CloseReason.END_OF_INPUT);
  }

  /**
   * Two clusters far apart in Hilbert order (600 and 400 rows, two ranges each, 2 files' worth):
   * the cut moves from its even position (row 500, inside the first cluster) to the gap between
   * them, so no file spans both (its bounds would cover the space between).
   */
  @Test
  void aCutMovesToTheGapBetweenClusters() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.target-file-size", "130KB", "sink.max-latency", "1h"));
    List<Either<RowData, RowData>> input = rows(2, 1_000, 0, 0, DAY_1, System.currentTimeMillis());
    long gapKey = 1L << 40;
    for (int i = 0; i < input.size(); i++) {
      long key = i < 600 ? i : gapKey + i;
      ((org.apache.flink.table.data.GenericRowData) input.get(i).left())
          .setField(TelemetryTable.HILBERT, key);
    }
    List<ClosedFile> files;
    try (var writer = s.batchWriter()) {
      writer.open();
      int[] bounds = {0, 300, 600, 800, 1_000};
      for (int r = 0; r < 4; r++) {
        writer.processElement(
            new StreamRecord<>(s.batch(input.subList(bounds[r], bounds[r + 1]), r)));
      }
      writer.endInput();
      files = closedFiles(SinkHarnesses.drainMessages(writer));
    }
    assertThat(files).extracting(f -> f.file().recordCount()).containsExactly(600L, 400L);
    assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(input));
  }

  /**
   * At each barrier only the rows that arrived since the previous one are staged; the state is the
   * list of runs; a restored writer buffers them again, reports their positions, and its file
   * consumes exactly those runs.
   */
  @Test
  void aBarrierStagesOnlyNewRowsAndARestoreRebuffersThem() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> first = rows(1, 100, 0, 0, DAY_1, now);
    List<Either<RowData, RowData>> second = rows(2, 50, 0, 100, DAY_1, now);
    OperatorSubtaskState state;
    try (var writer = s.writer(0, 1)) {
      writer.open();
      feed(writer, first);
      WriterReport report = barrier(writer, 1);
      assertThat(report.closed().isEmpty()).isTrue();
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), 0L));
      writer.snapshot(1, 1);
      List<Path> afterFirst = s.stagingRuns();
      assertThat(afterFirst).hasSize(1);
      long firstRunBytes = Files.size(afterFirst.get(0));

      feed(writer, second);
      barrier(writer, 2);
      state = writer.snapshot(2, 2);
      List<Path> afterSecond = s.stagingRuns();
      assertThat(afterSecond)
          .as("the second barrier adds one run, the first is kept")
          .hasSize(2)
          .containsAll(afterFirst);
      Path secondRun =
          afterSecond.stream().filter(p -> !afterFirst.contains(p)).findFirst().orElseThrow();
      assertThat(Files.size(secondRun)).as("only the 50 new rows").isLessThan(firstRunBytes);
      assertThat(barrier(writer, 3).closed().isEmpty()).as("no barrier wrote a data file").isTrue();
    }

    try (var restored = s.writer(0, 1)) {
      restored.initializeState(state);
      restored.open();
      WriterReport report = barrier(restored, 3);
      assertThat(report.receivedEnds()).isEqualTo(Map.of(key(0), 150L));
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), 0L));
      restored.endInput();
      List<WriterReport> last = SinkHarnesses.drain(restored);
      List<ClosedFile> files = last.get(0).closed().files();
      assertThat(files).hasSize(1);
      List<String> all = new ArrayList<>(idsOf(first));
      all.addAll(idsOf(second));
      assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(all);
      assertThat(files.get(0).consumedStaging())
          .extracting(SinkHarnesses::local)
          .containsExactlyInAnyOrderElementsOf(s.stagingRuns());
    }
  }

  /**
   * A writer state of version 1 (builds before staging runs: the rows inline) restores: the rows
   * are buffered again at once, the next barrier stages them to a run and the state lists only
   * runs, and the writer's file holds exactly those rows.
   */
  @Test
  void aVersion1StateWithInlineRowsIsBufferedAndStagedAtTheNextBarrier() throws Exception {
    SinkHarnesses s = sink(Map.of("sink.max-latency", "1h"));
    List<Either<RowData, RowData>> rows = rows(3, 40, 0, 0, DAY_1, System.currentTimeMillis());
    RowDataSerializer serializer = new RowDataSerializer(TelemetryTable.ROW_TYPE);
    DataOutputSerializer v1 = new DataOutputSerializer(4096);
    v1.writeInt(rows.size());
    DataOutputSerializer row = new DataOutputSerializer(512);
    for (Either<RowData, RowData> r : rows) {
      row.clear();
      serializer.serialize(r.left(), row);
      v1.writeInt(row.length());
      v1.write(row.getSharedBuffer(), 0, row.length());
    }
    // as SimpleVersionedSerialization frames a versioned value: version, length, bytes
    DataOutputSerializer framed = new DataOutputSerializer(v1.length() + 8);
    framed.writeInt(1);
    framed.writeInt(v1.length());
    framed.write(v1.getSharedBuffer(), 0, v1.length());
    OperatorSubtaskState state =
        SinkHarnesses.listState("writer_raw_states", List.of(framed.getCopyOfBuffer()));

    try (var restored = s.writer(0, 1)) {
      restored.initializeState(state);
      restored.open();
      WriterReport report = barrier(restored, 2);
      assertThat(report.closed().isEmpty()).as("buffered, not closed").isTrue();
      assertThat(report.buffered()).isEqualTo(Map.of(key(0), 0L));
      assertThat(s.stagingRuns()).as("nothing staged before the barrier's snapshot").isEmpty();
      restored.snapshot(2, 2);
      assertThat(s.stagingRuns()).as("the barrier staged the restored rows").hasSize(1);
      restored.endInput();
      List<ClosedFile> files = SinkHarnesses.drain(restored).get(0).closed().files();
      assertThat(ids(s.table(), files)).containsExactlyInAnyOrderElementsOf(idsOf(rows));
      assertThat(files.get(0).consumedStaging())
          .extracting(SinkHarnesses::local)
          .containsExactlyInAnyOrderElementsOf(s.stagingRuns());
    }
  }

  /** The writer reports among a writer's messages (the others are the checkpoint summaries). */
  private static List<WriterReport> reports(List<CommittableMessage<WriterReport>> messages) {
    return messages.stream()
        .flatMap(
            m ->
                m instanceof CommittableWithLineage<WriterReport> c
                    ? Stream.of(c.getCommittable())
                    : Stream.empty())
        .toList();
  }

  /** The files the reports among {@code messages} closed. */
  private static List<ClosedFile> closedFiles(List<CommittableMessage<WriterReport>> messages) {
    return reports(messages).stream().flatMap(r -> r.closed().files().stream()).toList();
  }
}
