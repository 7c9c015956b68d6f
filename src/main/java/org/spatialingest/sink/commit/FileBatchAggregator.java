package org.spatialingest.sink.commit;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.util.SimpleVersionedListState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.sink.compat.AggregatorListStates;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.recovery.CleanupPasses;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.RestoreReconciler;
import org.spatialingest.sink.recovery.SinkLease;
import org.spatialingest.sink.recovery.TableIdentity;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.LibraryThreads;
import org.spatialingest.table.SinkHistory;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TablePositions;

/**
 * Pre-commit step with parallelism 1: turns the {@link WriterReport}s of all writer subtasks into
 * one {@link FileBatch} per checkpoint (so the committer makes one snapshot per table per
 * checkpoint), with the source positions that batch records. The operator is the glue of four
 * roles, each in its own class:
 *
 * <ul>
 *   <li>{@link BatchAssembler}: reports between two barriers into a batch, its closed files stored
 *       once ({@link StoredBatch}), its positions ({@link WriterPositions}; with aligned
 *       checkpoints, which the sink enforces, a barrier's positions are exact);
 *   <li>{@link SinkLineage}: the lineage id and the batches emitted (for the {@link
 *       RestoreReconciler} and for the pending batches' files that clean-up keeps);
 *   <li>{@link FailureCleanup}: when and what {@link OrphanCleaner} removes after a (re)start;
 *   <li>{@link SinkLease}: one live job per sink id and table, taken before anything touches a
 *       table, renewed on a processing-time timer, released at close.
 * </ul>
 *
 * <p>Batches are tagged with the checkpoint whose barrier releases them here, not with the id the
 * writer used. That matters at end of input: every writer tags its final files {@code
 * Long.MAX_VALUE}, and writers finish at different checkpoints; merging by the aggregator's own
 * barrier (and at its own end of input) keeps every writer's last files.
 *
 * <p>State ({@link AggregatorState}): the lineage, the received end per source, when the state was
 * taken, and the staging horizons. A start without state continues from the table's positions and
 * removes what an earlier job of this sink left uncommitted (its rows are read again); a restore
 * from an older state removes what this lineage committed after it ({@link RestoreReconciler},
 * inside {@code initializeState}, before any batch of the restored job is committed). Clean-up
 * considers only this sink's {@link SinkScope} (its sink id), so another job writing the same table
 * keeps its runs and files.
 */
@Internal
public final class FileBatchAggregator extends AbstractStreamOperator<CommittableMessage<FileBatch>>
    implements OneInputStreamOperator<
            CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>,
        BoundedOneInput {
  private final SinkTables tables;
  private final SinkScope scope;
  private final Duration checkpointInterval;

  /** where a start without state continues from; null: the table's newest positions of any sink */
  private final StartPositions start;

  private transient BatchAssembler assembler;
  private transient SinkLineage lineage;
  private transient FailureCleanup cleanup;

  /** this instance's token: names the batch files it stores, so clean-up tells them from others' */
  private transient String token;

  private transient long lastCheckpointId;
  private transient ListState<AggregatorState> state;

  /** the primary table's loader, open while the lease is held */
  private transient TableLoader leaseLoader;

  /** the primary table, loaded once: where batches are stored */
  private transient Table primary;

  private transient SinkLease lease;

  /** the tables' names and UUIDs ({@link TableIdentity}), kept in state to refuse another table */
  private transient ListState<String> tableIds;

  private transient List<String> currentTableIds;
  private transient ScheduledFuture<?> leaseRenewal;

  /** An aggregator whose start without state continues from the table's newest positions. */
  public FileBatchAggregator(SinkTables tables, SinkScope scope, Duration checkpointInterval) {
    this(tables, scope, checkpointInterval, null);
  }

  /**
   * @param scope whose files this sink cleans up, and whose lease it holds on the primary table
   * @param checkpointInterval C: how often the lease is renewed and how long it lives ({@link
   *     SinkLease})
   * @param start the positions a start without state continues from ({@link StartPositions}: this
   *     sink's, without those of a topic created again or of another cluster); null: the table's
   *     newest positions
   */
  public FileBatchAggregator(
      SinkTables tables, SinkScope scope, Duration checkpointInterval, StartPositions start) {
    this.tables = tables;
    this.scope = scope;
    this.checkpointInterval = checkpointInterval;
    this.start = start;
  }

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    LibraryThreads.stopOnRelease(getRuntimeContext());
    lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
    CleanupPasses passes =
        CleanupPasses.startingNow(
            getContainingTask().getEnvironment().getTaskManagerInfo().getConfiguration());
    assembler = new BatchAssembler();
    token = SinkFileNames.newToken();
    var store = context.getOperatorStateStore();
    state =
        new SimpleVersionedListState<>(
            store.getListState(
                new ListStateDescriptor<>(
                    "aggregator-state", BytePrimitiveArraySerializer.INSTANCE)),
            new AggregatorStateSerializer());
    AggregatorState restored = null;
    for (AggregatorState s : state.get()) {
      restored = s;
    }
    AggregatorListStates.Restored listStates = AggregatorListStates.readAndClear(store);
    if (restored == null && listStates != null) {
      restored = AggregatorState.of(listStates);
    }
    lineage = restored == null ? SinkLineage.start() : SinkLineage.restored(restored);
    // before anything touches the tables: one live job per sink id and table
    acquireLease();
    tableIds =
        store.getListState(new ListStateDescriptor<>("table-ids", StringSerializer.INSTANCE));
    List<String> restoredTableIds = new ArrayList<>();
    tableIds.get().forEach(restoredTableIds::add);
    currentTableIds = TableIdentity.of(loadTables());
    TableIdentity.refuseAnother(restoredTableIds, currentTableIds);
    if (restored == null) {
      startWithoutState(passes);
    } else {
      restore(restored, context.getRestoredCheckpointId().orElse(0L), passes);
    }
  }

  /**
   * A start without state continues from what the table holds, so positions never go backwards;
   * what an earlier job of this sink left uncommitted is removed by the first clean-up (its rows
   * are read again from the positions).
   */
  private void startWithoutState(CleanupPasses passes) throws IOException {
    try (TableLoader loader = tables.primary().loader().clone()) {
      loader.open();
      Table table = loader.loadTable();
      assembler.continueFrom(start == null ? TablePositions.read(table) : start.positions());
      cleanup =
          FailureCleanup.afterStart(
              passes, SinkHistory.horizon(SinkHistory.lastSinkCommitMillis(table, scope.sinkId())));
    }
    LOG.info(
        "New sink lineage {}; positions continue from the table's {} sources",
        lineage.id(),
        assembler.receivedEnds().size());
  }

  /** A restore removes from the tables what this lineage committed after the restored state. */
  private void restore(AggregatorState restored, long checkpointId, CleanupPasses passes)
      throws IOException {
    assembler.continueFrom(restored.receivedEnds());
    long stateTime = restored.stateTimeMillis();
    cleanup =
        FailureCleanup.afterRestore(
            passes, checkpointId, restored.stagingHorizons(), SinkHistory.horizon(stateTime));
    List<TableLoader> loaders = new ArrayList<>();
    try {
      List<Table> loaded = new ArrayList<>();
      for (SinkTable t : tables) {
        TableLoader loader = t.loader().clone();
        loaders.add(loader);
        loader.open();
        loaded.add(loader.loadTable());
      }
      RestoreReconciler.reconcile(
          loaded,
          lineage.id(),
          new HashSet<>(lineage.emittedBatchIds()),
          stateTime,
          scope.sinkId(),
          start == null ? KafkaIds.unknown() : start.ids(),
          restored.receivedEnds());
    } finally {
      for (TableLoader loader : loaders) {
        loader.close();
      }
    }
  }

  private void acquireLease() {
    leaseLoader = tables.primary().loader().clone();
    leaseLoader.open();
    primary = leaseLoader.loadTable();
    lease =
        new SinkLease(
            primary.io(),
            primary.location(),
            primary.name(),
            scope,
            getRuntimeContext().getJobInfo().getJobId().toHexString(),
            lineage.id(),
            checkpointInterval);
    try {
      lease.acquire();
    } catch (SinkLease.Refused e) {
      throw new SuppressRestartsException(e); // a restart would be refused again
    }
  }

  @Override
  public void open() throws Exception {
    super.open();
    long period = lease.renewMillis();
    leaseRenewal =
        getProcessingTimeService().scheduleWithFixedDelay(now -> renewLease(), period, period);
  }

  private void renewLease() {
    try {
      lease.renew();
    } catch (SinkLease.Refused e) {
      throw new SuppressRestartsException(e);
    } catch (RuntimeException e) {
      // a store hiccup: the lease outlives three missed renewals
      LOG.warn("Renewing the sink's lease failed; retrying", e);
    }
  }

  @Override
  public void close() throws Exception {
    try {
      if (leaseRenewal != null) {
        leaseRenewal.cancel(false);
      }
      if (lease != null) {
        lease.release();
      }
      if (leaseLoader != null) {
        leaseLoader.close();
      }
    } finally {
      super.close();
    }
  }

  /** Each table of the sink, loaded once. */
  private List<Table> loadTables() throws IOException {
    List<Table> loaded = new ArrayList<>();
    for (SinkTable t : tables) {
      try (TableLoader loader = t.loader().clone()) {
        loader.open();
        loaded.add(loader.loadTable());
      }
    }
    return loaded;
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    tableIds.update(currentTableIds);
    state.update(
        List.of(
            new AggregatorState(
                lineage.id(),
                lineage.emittedBatchIds(),
                lineage.pendingBatches(),
                assembler.receivedEnds(),
                System.currentTimeMillis(),
                cleanup.horizonsAt(context.getCheckpointId()))));
  }

  @Override
  public void processElement(StreamRecord<CommittableMessage<WriterReport>> element) {
    if (element.getValue() instanceof CommittableWithLineage<WriterReport> withLineage) {
      WriterReport report = withLineage.getCommittable();
      assembler.accept(report);
      cleanup.reported(report.writerToken());
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    emit(checkpointId);
    cleanup.barrier(checkpointId);
    lastCheckpointId = checkpointId;
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    cleanup.checkpointComplete(
        checkpointId, token, tables, scope, () -> lineage.pendingFiles(primary.io()));
  }

  @Override
  public void endInput() throws IOException {
    // committed by the final checkpoint, whose id is at least the next one
    emit(lastCheckpointId + 1);
  }

  private void emit(long checkpointId) throws IOException {
    if (!assembler.hasFiles()) {
      return;
    }
    String location = SinkFileNames.batchFile(primary.location(), scope, checkpointId, token);
    FileBatch batch = assembler.assemble(checkpointId, lineage.id(), primary.io(), location);
    lineage.emitted(batch, location);
    output.collect(new StreamRecord<>(new CommittableSummary<>(0, 1, checkpointId, 1, 0)));
    output.collect(new StreamRecord<>(new CommittableWithLineage<>(batch, checkpointId, 0)));
  }
}
