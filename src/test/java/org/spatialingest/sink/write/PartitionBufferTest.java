package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.junit.jupiter.api.Test;

class PartitionBufferTest {
  @Test
  void rowsOfAnySizeComeBackIntactAndSortedByKey() throws Exception {
    Random random = new Random(3);
    PartitionBuffer buffer = new PartitionBuffer(null, 0);
    List<byte[]> rows = new ArrayList<>();
    List<Long> keys = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      // mostly small rows, some larger than a whole chunk (1 MiB)
      int length = i % 997 == 0 ? 1_500_000 + random.nextInt(1000) : random.nextInt(300);
      byte[] row = new byte[length];
      random.nextBytes(row);
      byte[] padded = new byte[length + 7]; // the writer passes a longer shared buffer and a length
      System.arraycopy(row, 0, padded, 0, length);
      long key = random.nextLong() >>> 2;
      buffer.add(padded, length, key, 1_000L + i, i);
      rows.add(row);
      keys.add(key);
    }
    assertThat(buffer.size()).isEqualTo(5_000);
    DataInputDeserializer in = new DataInputDeserializer();
    for (int i = 0; i < rows.size(); i++) {
      assertThat(buffer.copyOfRow(i)).isEqualTo(rows.get(i));
      buffer.read(i, in);
      byte[] read = new byte[rows.get(i).length];
      in.readFully(read);
      assertThat(read).isEqualTo(rows.get(i));
      assertThat(in.available()).isZero();
    }
    int[] order = buffer.sortedOrder();
    for (int i = 1; i < order.length; i++) {
      assertThat(keys.get(order[i - 1])).isLessThanOrEqualTo(keys.get(order[i]));
    }
    assertThat(buffer.minIngestMillis()).isEqualTo(1_000L);
    assertThat(buffer.maxIngestMillis()).isEqualTo(5_999L);
  }

  @Test
  void aParkedBufferKeepsItsTotalsAndTakesItsRowsBackInOrder() throws Exception {
    PartitionBuffer buffer = new PartitionBuffer(null, 0);
    List<byte[]> rows = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      byte[] row = {(byte) i, 1, 2};
      buffer.add(row, row.length, 100 - i, 1_000L + i, i);
      rows.add(row);
      if (i == 5) {
        buffer.staged("run-1"); // rows 0..5 staged at a barrier
      }
    }
    long bytes = buffer.bytes();
    long perRow = BufferedRowSize.accountedBytes(3);
    assertThat(buffer.park()).as("the staged rows leave memory").isEqualTo(6 * perRow);
    assertThat(buffer.isParked()).isTrue();
    assertThat(buffer.memoryBytes()).as("rows 6..9 wait for the barrier").isEqualTo(4 * perRow);
    assertThat(buffer.parkedRows()).isEqualTo(6);
    assertThat(buffer.copyOfRow(6)).isEqualTo(rows.get(6));
    buffer.staged("run-2"); // the next barrier stages them, then they leave memory too
    assertThat(buffer.park()).isEqualTo(4 * perRow);
    assertThat(buffer.memoryBytes()).isZero();
    assertThat(buffer.bytes()).as("its totals stay").isEqualTo(bytes);
    assertThat(buffer.parkedBytes()).isEqualTo(bytes);
    assertThat(buffer.minIngestMillis()).isEqualTo(1_000L);
    assertThatThrownBy(buffer::sortedOrder).isInstanceOf(IllegalStateException.class);

    // reopened: new rows in memory after the parked ones
    byte[] late = {42, 1, 2};
    buffer.add(late, late.length, 50, 5_000L, 11);
    assertThat(buffer.isParked()).isFalse();
    assertThat(buffer.size()).isEqualTo(11);
    assertThat(buffer.memoryBytes()).isEqualTo(perRow);
    assertThat(buffer.stagedRows()).isEqualTo(10);

    long[] keys = new long[10];
    for (int i = 0; i < 10; i++) {
      keys[i] = 100 - i;
    }
    assertThat(buffer.loadParked(rows, keys)).isEqualTo(bytes);
    assertThat(buffer.parkedRows()).isZero();
    assertThat(buffer.memoryBytes()).isEqualTo(buffer.bytes());
    for (int i = 0; i < 10; i++) {
      assertThat(buffer.copyOfRow(i)).isEqualTo(rows.get(i));
    }
    assertThat(buffer.copyOfRow(10)).isEqualTo(late);
    int[] order = buffer.sortedOrder();
    assertThat(order[0]).as("the late row has the lowest key").isEqualTo(10);
    assertThat(buffer.key(order[1])).isEqualTo(91L);
  }
}
