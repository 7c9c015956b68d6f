package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.EventReceivingTasks;
import org.apache.flink.runtime.operators.coordination.MockOperatorCoordinatorContext;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.operators.coordination.OperatorEventGateway;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.RowDataWrapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * The placement step ({@link WriterAssigner}) in Flink's operator test harness, talking by operator
 * events to a real {@link RangeCoordinator} in Flink's coordinator test context (or to none), with
 * the job's telemetry table: the first rows after a start are held until the early merge's ranges
 * come and then placed by them (two subtasks reading two areas cut the same ranges); rows still
 * held at a barrier leave before it; the early report goes by rows, and without ranges the hold's
 * time releases the rows by the fallback; ranges of a later round move a partition's rows to other
 * ranges. Asserts on the batches it emits and the events it sends.
 */
class WriterAssignerHarnessTest {
  private static final int WRITERS = 4;

  @TempDir Path dir;

  private final List<RangeCoordinator> coordinators = new ArrayList<>();

  @AfterEach
  void closeCoordinators() {
    coordinators.forEach(RangeCoordinator::close);
  }

  /** Creates the operator as {@link WriterAssignerFactory} does, with the test's gateway. */
  private static final class Factory extends AbstractStreamOperatorFactory<RowBatch>
      implements OneInputStreamOperatorFactory<RowData, RowBatch> {
    private final transient WriterAssigner.Settings<RowData> settings;
    private final transient OperatorEventGateway gateway;

    Factory(WriterAssigner.Settings<RowData> settings, OperatorEventGateway gateway) {
      this.settings = settings;
      this.gateway = gateway;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <S extends StreamOperator<RowBatch>> S createStreamOperator(
        StreamOperatorParameters<RowBatch> parameters) {
      return (S) new WriterAssigner<>(parameters, settings, gateway);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Class<? extends StreamOperator<?>> getStreamOperatorClass(ClassLoader classLoader) {
      return (Class) WriterAssigner.class;
    }
  }

  private SinkHarnesses tables;
  private TableLayout layout;
  private Table table;

  private WriterAssigner.Settings<RowData> settings() {
    tables = new SinkHarnesses(dir, Map.of());
    layout = TelemetryTable.layout(tables.config());
    table = tables.table();
    TablePlacement.Table placement =
        new TablePlacement.Table(layout, table.spec(), layout.writeSchema(table.schema()), true);
    return new WriterAssigner.Settings<>(
        TableRouter.single(),
        List.of(placement),
        DistributionMode.RANGE,
        tables.config().sizingBounds(),
        WRITERS,
        tables.config().maxOpenPartitions(),
        0,
        null,
        InternalTypeInfo.of(layout.rowType()));
  }

  private static OneInputStreamOperatorTestHarness<RowData, RowBatch> harness(
      WriterAssigner.Settings<RowData> settings,
      OperatorEventGateway gateway,
      int subtask,
      int parallelism)
      throws Exception {
    var harness =
        new OneInputStreamOperatorTestHarness<>(
            new Factory(settings, gateway), parallelism, parallelism, subtask);
    harness.setup(
        RowBatch.TYPE.createSerializer(
            new org.apache.flink.api.common.serialization.SerializerConfigImpl()));
    harness.open();
    return harness;
  }

  /** Rows of one area (a 1° box at {@code lon}), ingested an hour ago: a backlog. */
  private static List<RowData> area(long seed, int n, double lon) throws Exception {
    TelemetryGenerator.Area box = new TelemetryGenerator.Area(lon, 40, lon + 1, 41, 0, 0, 0);
    List<RowData> rows = new ArrayList<>();
    for (var r :
        SinkHarnesses.rows(seed, n, 0, 0, DAY_1, System.currentTimeMillis() - 3_600_000L, box)) {
      rows.add(r.left());
    }
    return rows;
  }

  private static void feed(
      OneInputStreamOperatorTestHarness<RowData, RowBatch> h, List<RowData> rows) throws Exception {
    for (RowData row : rows) {
      h.processElement(new StreamRecord<>(row));
    }
  }

  private static List<RowBatch> batches(OneInputStreamOperatorTestHarness<RowData, RowBatch> h) {
    List<RowBatch> out = new ArrayList<>(h.extractOutputValues());
    h.getOutput().clear();
    return out;
  }

  /** The sort keys of a batch's rows, as its writer reads them. */
  private List<Long> keys(RowBatch batch) {
    List<Long> keys = new ArrayList<>();
    byte[] rows = batch.rows();
    MemorySegment segment = MemorySegmentFactory.wrap(rows);
    BinaryRowData row = new BinaryRowData(layout.fieldCount());
    for (int offset = 0; offset < rows.length; ) {
      int length = Integer.BYTES + RowBatch.rowLength(rows, offset);
      row.pointTo(segment, offset + Integer.BYTES, length - Integer.BYTES);
      keys.add(row.getLong(layout.sortKeyField()));
      offset += length;
    }
    return keys;
  }

  private static Set<Integer> slots(List<RowBatch> batches) {
    Set<Integer> slots = new HashSet<>();
    batches.forEach(b -> slots.add(Math.floorMod(b.slot(), WRITERS)));
    return slots;
  }

  @Test
  void theFirstRowsWaitForTheEarlyMergeAndBothSubtasksPlaceByItsRanges() throws Exception {
    WriterAssigner.Settings<RowData> settings = settings();
    int subtasks = 2;
    EventReceivingTasks tasks = EventReceivingTasks.createForRunningTasks();
    MockOperatorCoordinatorContext context =
        new MockOperatorCoordinatorContext(new OperatorID(), subtasks);
    RangeStatisticsSerializer serializer =
        new RangeStatisticsSerializer(settings.bounds(), WRITERS, settings.maxOpenPartitions());
    RangeCoordinator coordinator =
        new RangeCoordinator(
            "test-placement",
            context,
            new RangeStatistics(settings.bounds(), WRITERS, settings.maxOpenPartitions(), 0),
            serializer);
    coordinator.start();
    coordinators.add(coordinator);
    List<OneInputStreamOperatorTestHarness<RowData, RowBatch>> harnesses = new ArrayList<>();
    for (int s = 0; s < subtasks; s++) {
      coordinator.executionAttemptReady(s, 0, tasks.createGatewayForSubtask(s, 0));
      int subtask = s;
      harnesses.add(
          harness(
              settings,
              event -> {
                try {
                  coordinator.handleEventFromOperator(subtask, 0, event);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              s,
              subtasks));
    }
    try {
      // subtask 0 reads an area in Europe, subtask 1 one in Asia (Kafka keyed by vehicle)
      feed(harnesses.get(0), area(1, 300, 5));
      feed(harnesses.get(1), area(2, 300, 100));
      for (var h : harnesses) {
        assertThat(batches(h)).as("held until the ranges come").isEmpty();
        h.setProcessingTime(StartupTimings.EARLY_REPORT_MILLIS); // the early report's timer
      }
      List<List<RowBatch>> placed = new ArrayList<>();
      for (int s = 0; s < subtasks; s++) {
        OperatorEvent ranges = await(tasks, s);
        ((WriterAssigner<?>) harnesses.get(s).getOneInputOperator()).handleOperatorEvent(ranges);
        harnesses.get(s).prepareSnapshotPreBarrier(1);
        placed.add(batches(harnesses.get(s)));
      }
      for (int s = 0; s < subtasks; s++) {
        assertThat(placed.get(s).stream().mapToInt(b -> keys(b).size()).sum())
            .as("every held row went out")
            .isEqualTo(300);
      }
      assertThat(slots(placed.get(0)))
          .as("the two areas are cut apart by the merged ranges: no writer gets both")
          .doesNotContainAnyElementsOf(slots(placed.get(1)));
      assertThat(context.isJobFailed()).isFalse();
    } finally {
      for (var h : harnesses) {
        h.close();
      }
    }
  }

  @Test
  void rowsStillHeldAtABarrierLeaveBeforeItAndTheCheckpointReportFollows() throws Exception {
    List<OperatorEvent> sent = new CopyOnWriteArrayList<>();
    try (var h = harness(settings(), sent::add, 0, 1)) {
      List<RowData> rows = area(1, 200, 5);
      feed(h, rows);
      assertThat(batches(h)).as("held: no ranges yet").isEmpty();
      h.prepareSnapshotPreBarrier(1);
      List<RowBatch> out = batches(h);
      assertThat(out.stream().mapToInt(b -> keys(b).size()).sum())
          .as("no row crosses the barrier held")
          .isEqualTo(rows.size());
      h.snapshot(1, 1);
      assertThat(sent).hasSize(3);
      assertThat(sent.get(0)).isEqualTo(new RangeEvents.Request(false));
      assertThat(sent.get(1))
          .as("the first row announces the early report")
          .isEqualTo(new RangeEvents.Request(true));
      RangeEvents.Report report = (RangeEvents.Report) sent.get(2);
      SubtaskReport decoded =
          new SubtaskReportSerializer().deserialize(report.version(), report.bytes());
      assertThat(decoded.round()).as("the checkpoint's report").isEqualTo(1);
    }
  }

  @Test
  void theEarlyReportGoesAfterItsRowsAndTheHoldsTimeReleasesTheRowsByTheFallback()
      throws Exception {
    List<OperatorEvent> sent = new CopyOnWriteArrayList<>();
    try (var h = harness(settings(), sent::add, 0, 1)) {
      List<RowData> rows = area(1, StartupTimings.EARLY_REPORT_ROWS, 5);
      feed(h, rows);
      assertThat(sent).as("open request, first-row announcement, early report").hasSize(3);
      RangeEvents.Report report = (RangeEvents.Report) sent.get(2);
      SubtaskReport early =
          new SubtaskReportSerializer().deserialize(report.version(), report.bytes());
      assertThat(early.round()).as("the early report, sent by rows before any timer").isZero();
      assertThat(
              early.tables().get(0).stream().mapToLong(SubtaskReport.PartitionSample::rows).sum())
          .isEqualTo(rows.size());
      assertThat(batches(h)).as("still held: no ranges came").isEmpty();

      h.setProcessingTime(StartupTimings.HOLD_MILLIS); // both timers of the hold fire
      List<RowBatch> out = batches(h);
      assertThat(out).as("the hold's time released the held rows (full batches left)").isNotEmpty();
      h.prepareSnapshotPreBarrier(1); // the batches not full yet
      out.addAll(batches(h));
      assertThat(out.stream().mapToInt(b -> keys(b).size()).sum())
          .as("every held row went out")
          .isEqualTo(rows.size());
      assertThat(slots(out))
          .as(
              "by the fallback: this subtask's own keys cut into ranges (a backlog: one per writer)")
          .hasSize(WRITERS);
      assertThat(sent).as("the early report went once").hasSize(3);
    }
  }

  @Test
  void rangesOfALaterRoundMoveAPartitionsRowsToOtherRanges() throws Exception {
    try (var h = harness(settings(), event -> {}, 0, 1)) {
      List<RowData> rows = area(1, 400, 5);
      String path = partitionPath(rows.get(0));
      List<Long> sorted = new ArrayList<>();
      rows.forEach(r -> sorted.add(r.getLong(layout.sortKeyField())));
      sorted.sort(null);
      long median = sorted.get(sorted.size() / 2);
      // round 1: two ranges cut at the median; round 2: four, at the quartiles
      deliver(h, path, 1, 2, new long[] {median});
      feed(h, rows);
      h.prepareSnapshotPreBarrier(1);
      Map<Integer, List<Long>> first = byRange(batches(h));
      assertThat(first.keySet()).containsExactlyInAnyOrder(0, 2);
      assertThat(first.get(0)).allSatisfy(k -> assertThat(k).isLessThan(median));
      assertThat(first.get(2)).allSatisfy(k -> assertThat(k).isGreaterThanOrEqualTo(median));

      long[] quartiles = {sorted.get(100), median, sorted.get(300)};
      deliver(h, path, 2, 4, quartiles);
      feed(h, rows);
      h.prepareSnapshotPreBarrier(2);
      Map<Integer, List<Long>> second = byRange(batches(h));
      assertThat(second.keySet()).containsExactlyInAnyOrder(0, 1, 2, 3);
      for (int r = 0; r < 4; r++) {
        long low = r == 0 ? Long.MIN_VALUE : quartiles[r - 1];
        long high = r == 3 ? Long.MAX_VALUE : quartiles[r];
        assertThat(second.get(r)).allSatisfy(k -> assertThat(k).isBetween(low, high - 1));
      }
    }
  }

  private Map<Integer, List<Long>> byRange(List<RowBatch> batches) {
    Map<Integer, List<Long>> byRange = new HashMap<>();
    for (RowBatch b : batches) {
      byRange.computeIfAbsent(b.bufferId(), r -> new ArrayList<>()).addAll(keys(b));
    }
    return byRange;
  }

  private String partitionPath(RowData row) {
    Schema writeSchema = layout.writeSchema(table.schema());
    PartitionKey key = new PartitionKey(table.spec(), writeSchema);
    key.partition(new RowDataWrapper(layout.rowType(), writeSchema.asStruct()).wrap(row));
    return table.spec().partitionToPath(key);
  }

  /** Sends the operator the ranges of round {@code round} for partition {@code path}. */
  private void deliver(
      OneInputStreamOperatorTestHarness<RowData, RowBatch> h,
      String path,
      long round,
      int ranges,
      long[] cuts)
      throws Exception {
    GlobalRanges global =
        new GlobalRanges(
            round,
            4,
            List.of(
                new GlobalRanges.TableRanges(
                    new long[0], Map.of(path, new GlobalRanges.PartitionRanges(ranges, cuts)))));
    ((WriterAssigner<?>) h.getOneInputOperator())
        .handleOperatorEvent(
            new RangeEvents.Ranges(
                GlobalRangesSerializer.VERSION, new GlobalRangesSerializer().serialize(global)));
  }

  /** Waits for the coordinator's ranges to subtask {@code s} (its thread sends them). */
  private static OperatorEvent await(EventReceivingTasks tasks, int s) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (tasks.getSentEventsForSubtask(s).isEmpty()) {
      assertThat(System.nanoTime())
          .as("the coordinator's ranges to subtask %d", s)
          .isLessThan(deadline);
      Thread.sleep(10);
    }
    return tasks.getSentEventsForSubtask(s).get(0);
  }
}
