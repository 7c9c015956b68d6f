package org.spatialingest.source;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.CommittedRecords;

/**
 * Right after the source: on a start without state, drops the records the tables already hold (below the recorded
 * positions, or committed above them: {@link CommittedRecords}), so a restart without state, or a re-run of the same
 * files, neither loses nor duplicates a row. What it skips is fixed at that start and kept in state until the job
 * restores from a checkpoint taken after it; a record of a source the table has no position for always passes.
 *
 * <p>Cost per record: one hash lookup by source key (the same string instance per partition or file).
 */
public final class ResumeFilter extends ProcessFunction<SourceRecord, SourceRecord> implements CheckpointedFunction {
  private static final Logger LOG = LoggerFactory.getLogger(ResumeFilter.class);

  private final TableLoader telemetry;
  private final TableLoader rejects;
  private transient CommittedRecords committed;
  private transient ListState<byte[]> state;
  private transient Counter skipped;

  public ResumeFilter(TableLoader telemetry, TableLoader rejects) {
    this.telemetry = telemetry;
    this.rejects = rejects;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    state = context.getOperatorStateStore().getUnionListState(
        new ListStateDescriptor<>("committed-records", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
    if (context.isRestored()) {
      committed = CommittedRecords.none();
      for (byte[] bytes : state.get()) {
        committed = decode(bytes); // every subtask stored the same copy
      }
      return;
    }
    try (TableLoader t = telemetry.clone(); TableLoader r = rejects.clone()) {
      t.open();
      r.open();
      committed = CommittedRecords.read(t.loadTable(), r.loadTable());
    }
    if (!committed.isEmpty()) {
      long above = committed.above().values().stream().mapToLong(a -> a.length).sum();
      LOG.info("Start without state: the tables record positions for {} sources and hold {} records above them; "
          + "those are skipped", committed.positions().size(), above);
    }
  }

  @Override
  public void open(OpenContext openContext) {
    skipped = getRuntimeContext().getMetricGroup().counter("skippedCommitted");
  }

  @Override
  public void processElement(SourceRecord record, Context ctx, Collector<SourceRecord> out) {
    if (record.source != null && !committed.isEmpty() && committed.contains(record.source, record.position())) {
      skipped.inc();
      return;
    }
    out.collect(record);
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    state.update(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0 && !committed.isEmpty()
        ? List.of(encode(committed)) : List.of());
  }

  private static byte[] encode(CommittedRecords c) throws java.io.IOException {
    DataOutputSerializer out = new DataOutputSerializer(1024);
    out.writeInt(c.positions().size());
    for (Map.Entry<String, Long> e : c.positions().entrySet()) {
      out.writeUTF(e.getKey());
      out.writeLong(e.getValue());
      long[] above = c.above().getOrDefault(e.getKey(), new long[0]);
      out.writeInt(above.length);
      for (long p : above) {
        out.writeLong(p);
      }
    }
    return out.getCopyOfBuffer();
  }

  private static CommittedRecords decode(byte[] bytes) throws java.io.IOException {
    DataInputDeserializer in = new DataInputDeserializer(bytes);
    int n = in.readInt();
    Map<String, Long> positions = new HashMap<>();
    Map<String, long[]> above = new HashMap<>();
    for (int i = 0; i < n; i++) {
      String key = in.readUTF();
      positions.put(key, in.readLong());
      long[] a = new long[in.readInt()];
      for (int j = 0; j < a.length; j++) {
        a[j] = in.readLong();
      }
      above.put(key, a);
    }
    return new CommittedRecords(positions, above);
  }
}
