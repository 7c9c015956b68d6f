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
 * Versioned binary form of {@link AggregatorState}. Version 1: lineage; emitted batch ids; pending
 * batches' file locations; received positions; state time; a flag and the staging horizons. The
 * releases before it (up to 99d1af5) kept the same facts in six list states with text encodings;
 * {@link LegacyAggregatorState} reads those.
 */
final class AggregatorStateSerializer implements SimpleVersionedSerializer<AggregatorState> {
  static final int VERSION = 1;

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
    out.writeInt(state.pendingBatchFiles().size());
    for (List<String> batch : state.pendingBatchFiles()) {
      out.writeInt(batch.size());
      for (String file : batch) {
        out.writeUTF(file);
      }
    }
    ClosedFileManifests.writePositions(state.received(), out);
    out.writeLong(state.stateTimeMillis());
    out.writeBoolean(state.stagingHorizons() != null);
    if (state.stagingHorizons() != null) {
      ClosedFileManifests.writePositions(state.stagingHorizons(), out);
    }
    return out.getCopyOfBuffer();
  }

  @Override
  public AggregatorState deserialize(int version, byte[] serialized) throws IOException {
    if (version != VERSION) {
      throw new IOException(
          "unknown aggregator state version " + version + " (this build reads " + VERSION + ")");
    }
    DataInputDeserializer in = new DataInputDeserializer(serialized);
    String lineage = in.readUTF();
    int emittedCount = in.readInt();
    List<String> emitted = new ArrayList<>(emittedCount);
    for (int i = 0; i < emittedCount; i++) {
      emitted.add(in.readUTF());
    }
    int batches = in.readInt();
    List<List<String>> pending = new ArrayList<>(batches);
    for (int b = 0; b < batches; b++) {
      int files = in.readInt();
      List<String> batch = new ArrayList<>(files);
      for (int f = 0; f < files; f++) {
        batch.add(in.readUTF());
      }
      pending.add(batch);
    }
    Map<String, Long> received = ClosedFileManifests.readPositions(in);
    long stateTime = in.readLong();
    Map<String, Long> horizons =
        in.readBoolean() ? new HashMap<>(ClosedFileManifests.readPositions(in)) : null;
    return new AggregatorState(lineage, emitted, pending, received, stateTime, horizons);
  }
}
