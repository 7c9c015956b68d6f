package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.flink.RowDataWrapper;
import org.junit.jupiter.api.Test;
import org.spatialingest.config.JobConfig.TimePartitioning;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * Range placement without Flink's runtime: {@link PartitionPlacement}'s slot math on given ranges,
 * and {@link RangePlacement} placing rows of the telemetry table (no catalog: the layout's own
 * schema and spec) by the coordinator's ranges, by the table's quantiles for a partition the merge
 * has not seen, and by the fallback before any merge, on fake clocks. Asserts on the batches the
 * {@link RowBatcher} hands out.
 */
class RangePlacementTest {
  private static final int WRITERS = 4;
  private static final SizingBounds BOUNDS =
      new SizingBounds(64_000_000, 4_000_000, Duration.ofMinutes(1), Duration.ofSeconds(1));

  private final TableLayout layout = TelemetryTable.LAYOUT;
  private final TablePlacement.Table table =
      new TablePlacement.Table(
          layout,
          layout.partitionSpec(TimePartitioning.DAY),
          layout.writeSchema(layout.schema()),
          true);

  /** One batch the batcher handed out. */
  private record Sent(int slot, int table, int bufferId, int rows) {}

  private final List<Sent> sent = new ArrayList<>();
  private final RowBatcher batcher =
      new RowBatcher(
          List.of(new RowDataSerializer(TelemetryTable.LAYOUT.rowType())),
          (slot, t, spec, bufferId, rows, count) -> sent.add(new Sent(slot, t, bufferId, count)));
  private long nanos = 1_000_000_000_000L;

  /** The wall clock: an hour after the rows were ingested, so they are a backlog (L = 1 min). */
  private long wallMillis = DAY_1 + 3_600_000L;

  private RangePlacement placement(DistributionMode mode) {
    return new RangePlacement(
        List.of(table),
        mode,
        BOUNDS,
        WRITERS,
        32,
        0,
        1,
        () -> 0,
        batcher,
        () -> nanos,
        () -> wallMillis);
  }

  /** Telemetry rows of one day whose sort keys are {@code keys}. */
  private static List<RowData> withKeys(long... keys) throws Exception {
    List<RowData> rows = new ArrayList<>();
    var generated = SinkHarnesses.rows(1, keys.length, 0, 0, DAY_1, DAY_1);
    for (int i = 0; i < keys.length; i++) {
      GenericRowData row = (GenericRowData) generated.get(i).left();
      row.setField(TelemetryTable.HILBERT, keys[i]);
      rows.add(row);
    }
    return rows;
  }

  private static long[] keys(int n, long step) {
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = i * step;
    }
    return keys;
  }

  /** Places each row as the operator does, each in a batch of its own. */
  private List<Sent> placeOneByOne(RangePlacement placement, List<RowData> rows) {
    sent.clear();
    TablePlacement t = placement.table(0);
    for (RowData row : rows) {
      PartitionPlacement partition = placement.partition(t, row);
      if (t.ranged()) {
        placement.sample(t, partition, row);
      }
      placement.place(t, partition, row);
      batcher.sendAll();
    }
    return new ArrayList<>(sent);
  }

  private String pathOf(RowData row) {
    PartitionKey key = new PartitionKey(table.spec(), table.writeSchema());
    key.partition(new RowDataWrapper(layout.rowType(), table.writeSchema().asStruct()).wrap(row));
    return table.spec().partitionToPath(key);
  }

  @Test
  void aKeysBufferIdIsItsRangesFirstFinestSlotAndEachWriterGetsOneBlockOfAdjacentRanges() {
    PartitionPlacement p = new PartitionPlacement(7, "day=1", true, null);
    p.use(8, 4, new long[] {100, 200, 300});
    assertThat(List.of(p.bufferId(0), p.bufferId(150), p.bufferId(250), p.bufferId(999)))
        .containsExactly(0, 2, 4, 6);
    assertThat(List.of(p.slot(0, 4), p.slot(2, 4), p.slot(4, 4), p.slot(6, 4)))
        .as("4 ranges of a finest 8 on 4 writers: half the finest split, so 2 writers, 2 each")
        .containsExactly(7, 7, 8, 8);
    p.use(4, 4, new long[] {100, 200, 300});
    assertThat(List.of(p.slot(0, 4), p.slot(1, 4), p.slot(2, 4), p.slot(3, 4)))
        .as("4 ranges of a finest 4 on 4 writers: the finest split, one each from the base on")
        .containsExactly(7, 8, 9, 10);
    p.use(8, 4, new long[] {100, 200, 300});
    // halved to 2 ranges (cut at 200): a key keeps its buffer id
    p.use(8, 2, new long[] {200});
    assertThat(p.bufferId(150)).isZero();
    assertThat(p.bufferId(250)).isEqualTo(4);

    // every count and writer count: range r of k goes to writer offset r * w / k (w: the writers
    // RangeCount.writersFor gives k), so the writers' blocks start where Quantiles cuts them
    for (int writers : new int[] {1, 3, 4, 8}) {
      for (int k = 1; k <= 16; k *= 2) {
        long[] boundaries = new long[k - 1];
        for (int i = 0; i < boundaries.length; i++) {
          boundaries[i] = (i + 1) * 10L;
        }
        p.use(16, k, boundaries);
        List<Integer> offsets = new ArrayList<>();
        for (int r = 0; r < k; r++) {
          offsets.add(p.slot(p.bufferId(r * 10L), writers) - 7);
        }
        Set<Integer> blockStarts = new HashSet<>();
        for (int r = 1; r < k; r++) {
          assertThat(offsets.get(r)).isGreaterThanOrEqualTo(offsets.get(r - 1));
          if (!offsets.get(r).equals(offsets.get(r - 1))) {
            blockStarts.add(r);
          }
        }
        int used = RangeCount.writersFor(k, 16, writers);
        int blocks = Quantiles.blocks(k, used);
        Set<Integer> cut = new HashSet<>();
        for (int j = 1; j < blocks; j++) {
          cut.add(Quantiles.firstRangeOfBlock(j, k, blocks));
        }
        assertThat(blockStarts).as("%d ranges, %d writers: %s", k, writers, offsets).isEqualTo(cut);
        assertThat(offsets.get(k - 1)).isLessThan(used);
        assertThat(new HashSet<>(offsets)).hasSize(Math.min(k, used));
      }
    }
  }

  @Test
  void rowsGoByTheCoordinatorsRangesForTheirPartition() throws Exception {
    RangePlacement placement = placement(DistributionMode.RANGE);
    List<RowData> rows = withKeys(5, 150, 250, 350, 120);
    String path = pathOf(rows.get(0));
    placement.useGlobal(
        new GlobalRanges(
            1,
            8,
            List.of(
                new GlobalRanges.TableRanges(
                    new long[0],
                    Map.of(
                        path, new GlobalRanges.PartitionRanges(4, new long[] {100, 200, 300}))))));
    List<Sent> out = placeOneByOne(placement, rows);
    assertThat(out).extracting(Sent::bufferId).containsExactly(0, 2, 4, 6, 2);
    int base = placement.table(0).partitionsByPath().get(path).base;
    assertThat(out)
        .extracting(Sent::slot)
        .as("4 ranges of a finest 8: half the finest split, on 2 of the 4 writers, 2 ranges each")
        .containsExactly(base, base, base + 1, base + 1, base);
  }

  @Test
  void aPartitionTheMergeHasNotSeenIsCutFromTheTablesQuantilesAtItsOwnCount() throws Exception {
    RangePlacement placement = placement(DistributionMode.RANGE);
    List<RowData> rows = withKeys(keys(400, 10));
    long[] quantiles = keys(64, 1_000);
    placement.useGlobal(
        new GlobalRanges(1, 16, List.of(new GlobalRanges.TableRanges(quantiles, Map.of()))));
    placeOneByOne(placement, rows);
    PartitionPlacement p = placement.table(0).partitionsByPath().get(pathOf(rows.get(0)));
    assertThat(p.ranges()).as("one range until its own rate is known").isEqualTo(1);

    placement.start();
    nanos += 1_000_000_000L;
    placement.refreshIfDue();
    assertThat(p.ranges())
        .as("a backlog (rows an hour old, L = 1 min): the finest split, on every writer")
        .isEqualTo(16);
    assertThat(p.finest()).isEqualTo(16);
    assertThat(p.boundaries()).containsExactly(Quantiles.cut(quantiles, 16, WRITERS));
  }

  @Test
  void beforeAnyMergeTheFallbackCutsThisSubtasksOwnKeysAndAnIdlePartitionIsForgotten()
      throws Exception {
    RangePlacement placement = placement(DistributionMode.RANGE);
    placement.start();
    List<RowData> rows = withKeys(keys(400, 10));
    placeOneByOne(placement, rows);
    nanos += 1_000_000_000L;
    placement.refreshIfDue();
    String path = pathOf(rows.get(0));
    PartitionPlacement p = placement.table(0).partitionsByPath().get(path);
    assertThat(p.ranges()).as("a backlog: the finest split").isEqualTo(16);
    assertThat(p.boundaries())
        .as("the 16-quantiles of the keys this subtask saw")
        .hasSize(15)
        .contains(1_000, 2_000, 3_000);
    List<Sent> out = placeOneByOne(placement, rows);
    assertThat(out.stream().map(Sent::slot).distinct().count()).isEqualTo(WRITERS);

    // the report drains what was sampled: 800 rows of one partition, 2 s (fake clock) after start
    nanos += 1_000_000_000L;
    SubtaskReport report = placement.report(1);
    assertThat(report.seconds()).isEqualTo(2.0);
    assertThat(report.tables().get(0))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.partition()).isEqualTo(path);
              assertThat(s.rows()).isEqualTo(800);
            });

    // rows waiting in a batch when the partition goes idle are sent before it is forgotten
    sent.clear();
    TablePlacement t = placement.table(0);
    placement.place(t, p, rows.get(0));
    assertThat(sent).isEmpty();
    for (int w = 0; w <= PartitionLoad.IDLE_WINDOWS; w++) {
      nanos += 1_000_000_000L;
      placement.refreshIfDue();
    }
    assertThat(placement.table(0).partitionsByPath()).isEmpty();
    assertThat(sent).extracting(Sent::rows).containsExactly(1);
  }

  @Test
  void withHashEveryRowOfAPartitionGoesToOneWriter() throws Exception {
    RangePlacement placement = placement(DistributionMode.HASH);
    assertThat(placement.anyRanged()).isFalse();
    List<Sent> out = placeOneByOne(placement, withKeys(keys(50, 1_000_000)));
    assertThat(out).extracting(Sent::bufferId).containsOnly(0);
    assertThat(out.stream().map(Sent::slot).distinct().count()).isEqualTo(1);
    assertThat(placement.report(1).tables().get(0))
        .as("nothing sampled, nothing to report")
        .isEmpty();
  }
}
