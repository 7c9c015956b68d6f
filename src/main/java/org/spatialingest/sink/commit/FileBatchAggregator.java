package org.spatialingest.sink.commit;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
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
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.recovery.CleanupPasses;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.RestoreReconciler;
import org.spatialingest.sink.recovery.SinkLease;
import org.spatialingest.sink.recovery.StagingReferences;
import org.spatialingest.table.LibraryThreads;
import org.spatialingest.table.SinkHistory;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TablePositions;

/**
 * Pre-commit step with parallelism 1: turns the {@link WriterReport}s of all writer subtasks into
 * one {@link FileBatch} per checkpoint (so the committer makes one snapshot per table per
 * checkpoint), and computes the source positions that batch records.
 *
 * <p>Positions: with aligned checkpoints, every record read before a barrier has reached a writer
 * before that barrier. So at a barrier, for each source key, every record below {@code min(highest
 * received + 1, lowest still buffered)} is in a closed file of this or an earlier batch. (Unaligned
 * checkpoints would break this; the job disables them.) The writers send their positions as changes
 * since their previous report, kept in {@link WriterPositions}.
 *
 * <p>Batches are tagged with the checkpoint whose barrier releases them here, not with the id the
 * writer used. That matters at end of input: every writer tags its final files {@code
 * Long.MAX_VALUE}, and writers finish at different checkpoints; merging by the aggregator's own
 * barrier (and at its own end of input) keeps every writer's last files.
 *
 * <p>Each batch's closed files go to storage once, at the barrier that releases it ({@link
 * StoredBatch}, in the primary table's staging directory); the batch it emits, and so the
 * committer's state, carries their location and a small header, not the files.
 *
 * <p>State ({@link AggregatorState}): the sink's lineage id, the ids (and, for the last few, the
 * stored files' locations) of the batches it emitted, the received end per source (one past the
 * highest received position), when the state was taken, and which writers' staging runs it may
 * reference ({@link StagingReferences}). A restore from an older state removes what this lineage
 * committed after it ({@link RestoreReconciler}); after the first checkpoint that completes since a
 * restore, and once more when no task of the failed attempt can still write ({@link
 * CleanupPasses}), {@link OrphanCleaner} removes what the failure left behind (retried at the next
 * checkpoint if it fails; and since the state says which runs it references, a restore that fails
 * again before the cleanup does not leave the first failure's runs behind for good). Clean-up
 * considers only this sink's {@link SinkScope} (its sink id), so another job writing the same table
 * keeps its runs and files.
 *
 * <p>Liveness: at start or restore, before it touches a table, the aggregator takes the sink id's
 * {@link SinkLease} on the primary table (a second live job with the same sink id fails there,
 * without restarts), renews it on a processing-time timer and releases it when it closes.
 */
@Internal
public final class FileBatchAggregator extends AbstractStreamOperator<CommittableMessage<FileBatch>>
    implements OneInputStreamOperator<
            CommittableMessage<WriterReport>, CommittableMessage<FileBatch>>,
        BoundedOneInput {
  /**
   * Emitted batch ids remembered; the newest committed one before a restore point is all the
   * reconciler needs.
   */
  static final int REMEMBERED_BATCHES = 256;

  /**
   * Emitted batches whose stored location is remembered: ones the committer may still commit after
   * a restore, whose files orphan clean-up must keep (read back from storage when it runs).
   */
  static final int PENDING_BATCHES = 8;

  private final List<SinkTable> tables;
  private final SinkScope scope;
  private final Duration checkpointInterval;

  /** where a start without state continues from; null: the table's newest positions of any sink */
  private final StartPositions start;

  /** closed files of the reports since the last barrier, as the writers encoded them */
  private final List<ClosedFiles> pending = new ArrayList<>();

  /**
   * what the writers reported of their source positions (changes applied as they arrive); made
   * where the operator runs
   */
  private transient WriterPositions positions;

  private final Set<String> reportedTokens = new HashSet<>();
  private final Map<Long, Set<String>> tokensAtBarrier = new HashMap<>();
  private final Deque<String> emitted = new ArrayDeque<>();

  /** the last {@link #PENDING_BATCHES} batches, oldest first */
  private final Deque<PendingBatch> pendingBatches = new ArrayDeque<>();

  /** this instance's token: names the batch files it stores, so clean-up tells them from others' */
  private transient String token;

  private long lastCheckpointId;

  /** when what a failure left behind is removed: twice after each (re)start */
  private transient CleanupPasses cleanup;

  /**
   * staging runs of barriers after this checkpoint are orphans (-1: every run of a writer that is
   * not current)
   */
  private long restoredCheckpointId = -1;

  /**
   * per earlier writer token, the highest checkpoint whose staging runs by that writer the restored
   * state may reference (see {@link StagingReferences}); {@code null} after restoring a state of a
   * build that did not keep them, until the first cleanup
   */
  private Map<String, Long> stagingHorizons = new HashMap<>();

  /** data files created before this are not considered */
  private long orphanHorizon;

  private long restoredStateTime;
  private String lineage;
  private transient ListState<AggregatorState> state;

  /** the primary table's loader, open while the lease is held */
  private transient TableLoader leaseLoader;

  /** the primary table, loaded once: where batches are stored */
  private transient Table primary;

  private transient SinkLease lease;
  private transient ScheduledFuture<?> leaseRenewal;

  /** An aggregator whose start without state continues from the table's newest positions. */
  public FileBatchAggregator(List<SinkTable> tables, SinkScope scope, Duration checkpointInterval) {
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
      List<SinkTable> tables, SinkScope scope, Duration checkpointInterval, StartPositions start) {
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
    cleanup =
        CleanupPasses.startingNow(
            getContainingTask().getEnvironment().getTaskManagerInfo().getConfiguration());
    positions = new WriterPositions();
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
    AggregatorState legacy = LegacyAggregatorState.readAndClear(store);
    if (restored == null) {
      restored = legacy;
    }
    lineage = restored == null ? UUID.randomUUID().toString() : restored.lineage();
    // before anything touches the tables: one live job per sink id and table
    acquireLease();
    if (restored == null) {
      // a start without state continues from what the table holds, so positions never go
      // backwards; what an earlier job of this sink left uncommitted is removed (its rows are read
      // again from the positions)
      try (TableLoader loader = tables.get(0).loader().clone()) {
        loader.open();
        Table table = loader.loadTable();
        positions.continueFrom(start == null ? TablePositions.read(table) : start.positions());
        orphanHorizon = SinkHistory.horizon(SinkHistory.lastSinkCommitMillis(table));
      }
      LOG.info(
          "New sink lineage {}; positions continue from the table's {} sources",
          lineage,
          positions.receivedEnds().size());
    } else {
      emitted.addAll(restored.emittedBatchIds());
      pendingBatches.addAll(restored.pendingBatches());
      positions.continueFrom(restored.received());
      restoredStateTime = restored.stateTimeMillis();
      stagingHorizons = restored.stagingHorizons();
      restoredCheckpointId = context.getRestoredCheckpointId().orElse(0L);
      orphanHorizon = SinkHistory.horizon(restoredStateTime);
      List<TableLoader> loaders = new ArrayList<>();
      try {
        List<Table> loaded = new ArrayList<>();
        for (SinkTable t : tables) {
          TableLoader loader = t.loader().clone();
          loaders.add(loader);
          loader.open();
          loaded.add(loader.loadTable());
        }
        RestoreReconciler.reconcile(loaded, lineage, new HashSet<>(emitted), restoredStateTime);
      } finally {
        for (TableLoader loader : loaders) {
          loader.close();
        }
      }
    }
  }

  private void acquireLease() {
    leaseLoader = tables.get(0).loader().clone();
    leaseLoader.open();
    primary = leaseLoader.loadTable();
    lease =
        new SinkLease(
            primary.io(),
            primary.location(),
            primary.name(),
            scope,
            getRuntimeContext().getJobInfo().getJobId().toHexString(),
            lineage,
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
    long period = SinkLease.renewMillis(checkpointInterval);
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

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    Map<String, Long> horizons = null; // still unknown: a restore of it keeps the earlier rule
    if (stagingHorizons != null) {
      // this state references runs of the writers at this barrier up to it, and what they restored
      horizons = new HashMap<>(stagingHorizons);
      long checkpointId = context.getCheckpointId();
      for (String token : tokensAtBarrier.getOrDefault(checkpointId, Set.of())) {
        horizons.merge(token, checkpointId, Math::max);
      }
    }
    state.update(
        List.of(
            new AggregatorState(
                lineage,
                new ArrayList<>(emitted),
                new ArrayList<>(pendingBatches),
                positions.receivedEnds(),
                System.currentTimeMillis(),
                horizons)));
  }

  @Override
  public void processElement(StreamRecord<CommittableMessage<WriterReport>> element) {
    if (element.getValue() instanceof CommittableWithLineage<WriterReport> withLineage) {
      WriterReport report = withLineage.getCommittable();
      if (!report.closed().isEmpty()) {
        pending.add(report.closed());
      }
      positions.apply(report);
      reportedTokens.add(report.writerToken());
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    emit(checkpointId);
    tokensAtBarrier.put(checkpointId, new HashSet<>(reportedTokens));
    reportedTokens.clear();
    lastCheckpointId = checkpointId;
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    super.notifyCheckpointComplete(checkpointId);
    Set<String> current = tokensAtBarrier.remove(checkpointId);
    tokensAtBarrier.keySet().removeIf(id -> id < checkpointId);
    if (current == null || !cleanup.due(System.currentTimeMillis())) {
      return;
    }
    SinkFaults.reach(SinkFaults.Point.BEFORE_ORPHAN_CLEANUP);
    StagingReferences references = new StagingReferences(restoredCheckpointId, stagingHorizons);
    Set<String> kept = new HashSet<>();
    // the batch files this instance stores are current too
    Set<String> currentTokens = new HashSet<>(current);
    currentTokens.add(token);
    try {
      // read before the cleaner looks at the tables: a batch file gone by then was committed
      Set<String> protectedFiles = pendingFiles();
      for (SinkTable t : tables) {
        try (TableLoader loader = t.loader().clone()) {
          loader.open();
          Table table = loader.loadTable();
          OrphanCleaner.clean(
              table, scope, currentTokens, references, orphanHorizon, protectedFiles, kept);
        }
      }
    } catch (Exception e) {
      // housekeeping only: what it did not remove is still known (state) and retried
      LOG.warn(
          "Removing what the failure left behind failed; retrying after the next checkpoint", e);
      return;
    }
    // the earlier writers whose runs are all gone need no horizon any more; after a state without
    // horizons, the runs kept are the ones it may reference
    Map<String, Long> horizons = new HashMap<>();
    for (String token : kept) {
      if (!current.contains(token)) {
        horizons.put(
            token,
            stagingHorizons == null
                ? restoredCheckpointId
                : stagingHorizons.getOrDefault(token, restoredCheckpointId));
      }
    }
    stagingHorizons = horizons;
    cleanup.passed();
  }

  /**
   * The files of the batches the committer may still commit: each stored batch's file and the data
   * files it lists (read back: one read per remembered batch, at clean-up only), or an earlier
   * build's data file list. A stored batch whose file is gone was committed; its files are in the
   * table.
   */
  private Set<String> pendingFiles() throws IOException {
    Set<String> files = new HashSet<>();
    for (PendingBatch batch : pendingBatches) {
      files.addAll(batch.dataFiles());
      if (batch.stored() != null) {
        files.add(batch.stored());
        files.addAll(StoredBatch.dataFiles(primary.io(), batch.stored()));
      }
    }
    return files;
  }

  @Override
  public void endInput() throws IOException {
    // committed by the final checkpoint, whose id is at least the next one
    emit(lastCheckpointId + 1);
  }

  private void emit(long checkpointId) throws IOException {
    if (pending.isEmpty()) {
      return;
    }
    String location = SinkFileNames.batchFile(primary.location(), scope, checkpointId, token);
    StoredBatch stored = StoredBatch.write(primary.io(), location, ClosedFiles.concat(pending));
    FileBatch batch = new FileBatch(checkpointId, lineage, stored, positions.positions());
    pending.clear();
    emitted.addLast(batch.batchId());
    while (emitted.size() > REMEMBERED_BATCHES) {
      emitted.removeFirst();
    }
    pendingBatches.addLast(PendingBatch.stored(location));
    while (pendingBatches.size() > PENDING_BATCHES) {
      pendingBatches.removeFirst();
    }
    output.collect(new StreamRecord<>(new CommittableSummary<>(0, 1, checkpointId, 1, 0)));
    output.collect(new StreamRecord<>(new CommittableWithLineage<>(batch, checkpointId, 0)));
  }
}
