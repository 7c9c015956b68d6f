package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

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
}
