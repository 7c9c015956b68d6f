package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * The aggregator's state format: version 2 round-trips stored and earlier-build batches; version 1
 * (builds up to b0e0565: each pending batch as its data file list) is still read, so its files stay
 * protected from the clean-up after the upgrade.
 */
class AggregatorStateSerializerTest {
  @Test
  void version2RoundTripsAndVersion1IsRead() throws Exception {
    AggregatorStateSerializer serializer = new AggregatorStateSerializer();
    AggregatorState state =
        new AggregatorState(
            "lineage-1",
            List.of("b1", "b2"),
            List.of(
                PendingBatch.ofDataFiles(List.of("file:/d/a.parquet")),
                PendingBatch.stored("file:/t/_staging/sinks/s/u/0000000000000000002-t.batch")),
            Map.of("t/0", 17L),
            1_000L,
            Map.of("tok", 2L));
    assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(state)))
        .isEqualTo(state);

    DataOutputSerializer v1 = new DataOutputSerializer(256);
    v1.writeUTF("lineage-1");
    v1.writeInt(1);
    v1.writeUTF("b1");
    v1.writeInt(1); // one pending batch
    v1.writeInt(2); // of two data files
    v1.writeUTF("file:/d/a.parquet");
    v1.writeUTF("file:/d/b.parquet");
    v1.writeInt(1);
    v1.writeUTF("t/0");
    v1.writeLong(17L);
    v1.writeLong(1_000L);
    v1.writeBoolean(false); // no horizons
    AggregatorState read = serializer.deserialize(1, v1.getCopyOfBuffer());
    assertThat(read.lineage()).isEqualTo("lineage-1");
    assertThat(read.emittedBatchIds()).containsExactly("b1");
    assertThat(read.pendingBatches())
        .containsExactly(
            PendingBatch.ofDataFiles(List.of("file:/d/a.parquet", "file:/d/b.parquet")));
    assertThat(read.receivedEnds()).isEqualTo(Map.of("t/0", 17L));
    assertThat(read.stateTimeMillis()).isEqualTo(1_000L);
    assertThat(read.stagingHorizons()).isNull();
  }
}
