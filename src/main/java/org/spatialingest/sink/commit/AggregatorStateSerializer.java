package org.spatialingest.sink.commit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.spatialingest.sink.core.ClosedFileManifests;

/**
 * Versioned binary form of {@link AggregatorState}. Version 2: lineage; emitted batch ids; pending
 * batches, each a flag and either its stored location or its data file locations; received
 * positions; state time; a flag and the staging horizons. Version 1 (read only; builds up to
 * b0e0565): the same with each pending batch as its data file locations. The releases before it (up
 * to 99d1af5) kept the same facts in six list states with text encodings; the compat room's {@link
 * org.spatialingest.sink.compat.AggregatorListStates} reads those.
 */
final class AggregatorStateSerializer implements SimpleVersionedSerializer<AggregatorState> {
  /** Pending batches as a stored batch's location or their data files. */
  static final int V2_STORED_BATCHES = 2;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V2_STORED_BATCHES;

  /** Pending batches as lists of data files; read only. */
  private static final int DATA_FILE_LISTS_V1 = 1;

  /** Every version this build reads. */
  static final java.util.Set<Integer> READS =
      java.util.Set.of(DATA_FILE_LISTS_V1, V2_STORED_BATCHES);

  @Override
  public int getVersion() {
    return VERSION;
  }

  @Override
  public byte[] serialize(AggregatorState state) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(4096);
    out.writeUTF(state.lineage());
    out.writeInt(state.emittedBatchIds().size());
    for (String id : state.emittedBatchIds()) {
      out.writeUTF(id);
    }
    out.writeInt(state.pendingBatches().size());
    for (PendingBatch batch : state.pendingBatches()) {
      out.writeBoolean(batch.stored() != null);
      if (batch.stored() != null) {
        out.writeUTF(batch.stored());
      } else {
        writeList(batch.dataFiles(), out);
      }
    }
    ClosedFileManifests.writePositions(state.receivedEnds(), out);
    out.writeLong(state.stateTimeMillis());
    out.writeBoolean(state.stagingHorizons() != null);
    if (state.stagingHorizons() != null) {
      ClosedFileManifests.writePositions(state.stagingHorizons(), out);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public AggregatorState deserialize(int version, byte[] serialized) throws IOException {
    if (!READS.contains(version)) {
      throw new IOException(
          "unknown aggregator state version " + version + " (this build reads " + READS + ")");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    String lineage = in.readUTF();
    int emittedCount = in.readInt();
    List<String> emitted = new ArrayList<>(emittedCount);
    for (int i = 0; i < emittedCount; i++) {
      emitted.add(in.readUTF());
    }
    int batches = in.readInt();
    List<PendingBatch> pending = new ArrayList<>(batches);
    for (int b = 0; b < batches; b++) {
      boolean stored = version == V2_STORED_BATCHES && in.readBoolean();
      pending.add(
          stored ? PendingBatch.stored(in.readUTF()) : PendingBatch.ofDataFiles(readList(in)));
    }
    Map<String, Long> received = ClosedFileManifests.readPositions(in);
    long stateTime = in.readLong();
    Map<String, Long> horizons =
        in.readBoolean() ? new HashMap<>(ClosedFileManifests.readPositions(in)) : null;
    return new AggregatorState(lineage, emitted, pending, received, stateTime, horizons);
  }

  private static void writeList(List<String> values, DataOutputSerializer out) throws IOException {
    out.writeInt(values.size());
    for (String v : values) {
      out.writeUTF(v);
    }
  }

  private static List<String> readList(DataInputDeserializer in) throws IOException {
    int count = in.readInt();
    List<String> values = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      values.add(in.readUTF());
    }
    return values;
  }
}
