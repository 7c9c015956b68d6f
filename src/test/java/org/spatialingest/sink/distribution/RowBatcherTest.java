package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.junit.jupiter.api.Test;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.table.TelemetryTable;

/**
 * The batches on their way to the writers, without Flink's runtime: a batch goes when it holds
 * {@link RowBatcher#BATCH_BYTES}, when a row for another slot comes, when all hold {@link
 * RowBatcher#PENDING_BYTES}, and on {@link RowBatcher#sendAll}; every row once, in order.
 */
class RowBatcherTest {
  private record Sent(int slot, int bufferId, int bytes, int rows) {}

  private final List<Sent> sent = new ArrayList<>();
  private final RowBatcher batcher =
      new RowBatcher(
          List.of(new RowDataSerializer(TelemetryTable.LAYOUT.rowType())),
          (slot, table, spec, bufferId, rows, count) ->
              sent.add(new Sent(slot, bufferId, rows.length, count)));

  private static List<RowData> rows(int n) throws Exception {
    List<RowData> rows = new ArrayList<>();
    SinkHarnesses.rows(1, n, 0, 0, DAY_1, DAY_1).forEach(r -> rows.add(r.left()));
    return rows;
  }

  @Test
  void aBatchGoesWhenFullWhenItsSlotChangesAndOnSendAll() throws Exception {
    RowBatcher.PartitionBatches partition = batcher.forPartition(0, 0);
    List<RowData> rows = rows(2_000);
    int placed = 0;
    while (sent.isEmpty()) {
      batcher.add(partition, 2, 5, rows.get(placed++));
    }
    int full = placed;
    assertThat(sent)
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.bytes()).isGreaterThanOrEqualTo(RowBatcher.BATCH_BYTES);
              assertThat(s.bytes()).isLessThan(RowBatcher.BATCH_BYTES + 1_024);
              assertThat(s.rows()).isEqualTo(full);
              assertThat(s.slot()).isEqualTo(5);
              assertThat(s.bufferId()).isEqualTo(2);
            });
    assertThat(batcher.pendingBytes()).isZero();

    batcher.add(partition, 2, 5, rows.get(placed++));
    batcher.add(partition, 2, 6, rows.get(placed++));
    assertThat(sent).as("the row for slot 6 sent slot 5's batch first").hasSize(2);
    assertThat(sent.get(1).rows()).isEqualTo(1);
    batcher.add(partition, 3, 6, rows.get(placed++));
    batcher.sendAll();
    assertThat(sent.subList(2, sent.size()))
        .extracting(Sent::bufferId, Sent::rows)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(2, 1), org.assertj.core.groups.Tuple.tuple(3, 1));
    assertThat(sent.stream().mapToInt(Sent::rows).sum()).isEqualTo(placed);
    batcher.sendAll();
    assertThat(sent).as("nothing left to send").hasSize(4);
  }

  @Test
  void allBatchesGoOnceTogetherTheyHoldThePendingLimit() throws Exception {
    List<RowData> rows = rows(200);
    List<RowBatcher.PartitionBatches> partitions = new ArrayList<>();
    for (int p = 0; p < 400; p++) {
      partitions.add(batcher.forPartition(0, 0));
    }
    long added = 0;
    int i = 0;
    while (sent.isEmpty()) {
      batcher.add(partitions.get(i % partitions.size()), 0, i % 4, rows.get(i % rows.size()));
      added++;
      i++;
    }
    assertThat(sent.size()).as("every partition's batch at once").isEqualTo(partitions.size());
    assertThat(sent.stream().mapToInt(Sent::bytes).sum())
        .isGreaterThanOrEqualTo(RowBatcher.PENDING_BYTES);
    assertThat(sent.stream().mapToLong(Sent::rows).sum()).isEqualTo(added);
    assertThat(batcher.pendingBytes()).isZero();
  }
}
