package org.spatialingest.sink.recovery;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.SinkHistory;
import org.spatialingest.table.SinkPositions;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;

/**
 * Makes the table agree with the state a job restores from.
 *
 * <p>When a job restores from a checkpoint or savepoint older than its last commits (an older
 * savepoint, a rollback), the Kafka source replays from the restored offsets, so rows of batches
 * committed after that state would be committed a second time. Iceberg's own sink avoids the
 * duplicates by skipping checkpoint ids it has seen, and so silently drops new data instead
 * (apache/iceberg#10892). Here, every batch carries the sink's lineage (an id kept in state across
 * restores) and the restored state knows which batches it had produced; batches of the same lineage
 * committed after that point are removed in one delete snapshot before any new data flows, and the
 * replay commits their rows again, once. Other writers' snapshots and other lineages are never
 * touched.
 *
 * <p>If table maintenance (compaction) rewrote any file of such a batch in the meantime, its rows
 * now share files with rows that must stay, so they cannot be removed file by file. The restore
 * then stops before changing any table ({@link RewrittenByMaintenanceException}, no restarts): the
 * way out is to start without state, which resumes from the positions the table records and skips
 * what it holds, or to restore a newer checkpoint.
 */
@Internal
public final class RestoreReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(RestoreReconciler.class);

  private RestoreReconciler() {}

  /**
   * What a restore must revert in one table: this lineage's batches committed after the restored
   * state.
   */
  record Plan(
      Table table,
      String lineage,
      boolean primary,
      List<Snapshot> newer,
      Map<String, String> rewritten) {
    boolean isEmpty() {
      return newer.isEmpty();
    }
  }

  /**
   * Reverts, in every table, the batches of {@code lineage} committed after the restored state;
   * checks all tables before changing any, so a restore that must stop leaves every table as it
   * was.
   *
   * @param knownBatchIds batch ids the restored state had already produced (committed or pending)
   * @param stateTimeMillis when the restored state was taken; nothing committed before it can be
   *     newer than it
   * @param sinkId the restoring sink's id: another lineage of it that committed after the state
   *     refuses the restore ({@link AnotherLineageCommittedException})
   * @param current the Kafka ids the job reads now: only positions of them are compared
   * @param restoredEnds the restored state's received ends per source key
   * @return the number of batches reverted, per table
   * @throws RewrittenByMaintenanceException if a file to revert was rewritten by another writer
   *     (compaction)
   * @throws AnotherLineageCommittedException if another lineage of this sink committed after the
   *     state
   */
  public static List<Integer> reconcile(
      List<Table> tables,
      String lineage,
      Set<String> knownBatchIds,
      long stateTimeMillis,
      String sinkId,
      KafkaIds current,
      Map<String, Long> restoredEnds) {
    List<Plan> plans = new ArrayList<>();
    for (int i = 0; i < tables.size(); i++) {
      plans.add(plan(tables.get(i), lineage, knownBatchIds, stateTimeMillis, i == 0));
    }
    if (!tables.isEmpty()) {
      refuseIfItsBatchesWereReverted(tables.get(0), lineage, knownBatchIds);
      refuseIfAnotherLineageCommittedAfter(
          tables.get(0), lineage, knownBatchIds, stateTimeMillis, sinkId, current, restoredEnds);
    }
    for (Plan p : plans) {
      if (!p.rewritten().isEmpty()) {
        throw new RewrittenByMaintenanceException(p);
      }
    }
    List<Integer> reverted = new ArrayList<>();
    for (Plan p : plans) {
      reverted.add(apply(p));
    }
    return reverted;
  }

  /**
   * Refuses a restore that would replay what another lineage of the same sink committed since: a
   * start without state (a new lineage) after the state was taken, then a restore of that older
   * state. Its replay would commit again every record the newer lineage committed, and the
   * reconciliation reverts only the restoring lineage's own batches. Ordered by the table's
   * history, not by clocks: a commit of another lineage above the restoring lineage's newest commit
   * came after it (the lease keeps two lineages of one sink from running at once); with no commit
   * of its own in the history (a state taken before its first commit), one whose positions pass the
   * state's received ends did. Cost: one walk of the primary table's history down to the state.
   */
  static void refuseIfAnotherLineageCommittedAfter(
      Table primary,
      String lineage,
      Set<String> knownBatchIds,
      long stateTimeMillis,
      String sinkId,
      KafkaIds current,
      Map<String, Long> restoredEnds) {
    if (sinkId == null) {
      return;
    }
    List<Snapshot> others = new ArrayList<>();
    boolean reachedOwn = false;
    for (Snapshot s : SinkHistory.whole(primary)) {
      String batchId = s.summary().get(SnapshotSummaryKeys.BATCH_ID);
      if (batchId == null) {
        continue;
      }
      if (lineage.equals(s.summary().get(SnapshotSummaryKeys.LINEAGE))) {
        if (knownBatchIds.contains(batchId) || s.timestampMillis() < stateTimeMillis) {
          reachedOwn = true;
          break;
        }
        continue;
      }
      SinkPositions positions = TablePositions.fromSummary(s.summary(), s.snapshotId());
      if (positions != null && sinkId.equals(positions.sinkId())) {
        others.add(s);
      }
    }
    for (Snapshot s : others) {
      SinkPositions positions = TablePositions.fromSummary(s.summary(), s.snapshotId());
      String past = reachedOwn ? "" : firstPast(positions.applicableTo(current), restoredEnds);
      if (reachedOwn || past != null) {
        throw new AnotherLineageCommittedException(
            primary.name(), sinkId, lineage, s, past == null ? "" : past);
      }
    }
  }

  /**
   * Batches the restored state counts as committed were removed again: a restore of an older state
   * of this lineage reverted them after this state was taken (its delete snapshot names them,
   * {@link SnapshotSummaryKeys#REVERTED_BATCHES}). Their records lie below the state's offsets, so
   * the replay would never bring them back: refused, nothing changed. Walks the primary table's
   * history from the newest snapshot down to the state's newest batch still in it.
   */
  static void refuseIfItsBatchesWereReverted(
      Table primary, String lineage, Set<String> knownBatchIds) {
    for (Snapshot s : SinkHistory.whole(primary)) {
      if (!lineage.equals(s.summary().get(SnapshotSummaryKeys.LINEAGE))) {
        continue;
      }
      String batchId = s.summary().get(SnapshotSummaryKeys.BATCH_ID);
      if (batchId != null && knownBatchIds.contains(batchId)) {
        return; // the state's newest batch in the table: nothing of it was reverted after it
      }
      String reverted = s.summary().get(SnapshotSummaryKeys.REVERTED_BATCHES);
      if (reverted == null) {
        continue;
      }
      List<String> ofState = new ArrayList<>();
      for (String id : reverted.split(",")) {
        if (knownBatchIds.contains(id)) {
          ofState.add(id);
        }
      }
      if (!ofState.isEmpty()) {
        throw new BatchesRevertedException(primary.name(), lineage, s, ofState.size());
      }
    }
  }

  /** The first source key whose position passes the state's received end, or null. */
  private static String firstPast(Map<String, Long> offsets, Map<String, Long> restoredEnds) {
    for (Map.Entry<String, Long> e : offsets.entrySet()) {
      Long end = restoredEnds.get(e.getKey());
      if (e.getValue() > (end == null ? 0 : end)) {
        return e.getKey()
            + " at "
            + e.getValue()
            + " (the state's: "
            + (end == null ? "none" : end)
            + ")";
      }
    }
    return null;
  }

  /**
   * @param primary whether the table records the sink's source positions: the revert then records
   *     the positions of the newest snapshot it keeps, so a later start without state resumes from
   *     there
   */
  static Plan plan(
      Table table,
      String lineage,
      Set<String> knownBatchIds,
      long stateTimeMillis,
      boolean primary) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    List<Snapshot> newer = new ArrayList<>();
    Map<String, String> rewritten = new LinkedHashMap<>();
    if (current == null) {
      return new Plan(table, lineage, primary, newer, rewritten);
    }
    // files that snapshots after the oldest reverted batch removed (a compaction's replace, another
    // delete), by the
    // snapshot that removed them; only ancestors newer than the oldest batch to revert matter
    Map<String, Snapshot> removedBy = new LinkedHashMap<>();
    List<Snapshot> since = new ArrayList<>();
    SinkHistory.Window history = SinkHistory.whole(table);
    boolean reachedState = false;
    for (Snapshot s : history) {
      String batchId = s.summary().get(SnapshotSummaryKeys.BATCH_ID);
      if (batchId != null && lineage.equals(s.summary().get(SnapshotSummaryKeys.LINEAGE))) {
        if (knownBatchIds.contains(batchId)) {
          reachedState = true;
          break; // commits follow checkpoint order: everything older was produced before the
          // restored state
        }
        if (s.timestampMillis() < stateTimeMillis) {
          reachedState = true;
          break;
        }
        newer.add(s);
      }
      since.add(s);
    }
    if (!reachedState && history.mayHaveExpired(stateTimeMillis)) {
      // the history ends in expired snapshots newer than the state: batches committed after it may
      // be among them
      throw new IllegalStateException(
          "cannot restore "
              + table.name()
              + " to a state taken at "
              + stateTimeMillis
              + " ms: its snapshots before "
              + history.oldest().timestampMillis()
              + " ms are expired, so batches committed after "
              + "the state cannot all be found and reverted. Restore from a newer state, or keep snapshots longer "
              + "(maintenance.expire-snapshots.max-age above the age of the oldest state the job may be restored from)");
    }
    if (newer.isEmpty()) {
      return new Plan(table, lineage, primary, newer, rewritten);
    }
    Snapshot oldest = newer.get(newer.size() - 1);
    for (Snapshot s : since) {
      if (s.snapshotId() == oldest.snapshotId()) {
        break;
      }
      if (s.summary().containsKey(SnapshotSummaryKeys.BATCH_ID)) {
        continue; // this sink's own appends never remove files
      }
      for (DataFile f : SnapshotChanges.builderFor(table).snapshot(s).build().removedDataFiles()) {
        removedBy.putIfAbsent(f.location(), s);
      }
    }
    for (Snapshot s : newer) {
      for (DataFile f : SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles()) {
        Snapshot by = removedBy.get(f.location());
        if (by != null) {
          rewritten.put(f.location(), "snapshot " + by.snapshotId() + " (" + by.operation() + ")");
        }
      }
    }
    return new Plan(table, lineage, primary, newer, rewritten);
  }

  private static int apply(Plan plan) {
    if (plan.isEmpty()) {
      return 0;
    }
    Table table = plan.table();
    // this sink's positions as of before the removed batches, as they were recorded (so a walk for
    // them stops here, not at the removed batches' positions); formats 1 and 2 (a lineage of an
    // older release) name no sink
    Snapshot newest = plan.newer().get(0);
    SinkPositions removed = TablePositions.fromSummary(newest.summary(), newest.snapshotId());
    String sinkId = plan.primary() && removed != null ? removed.sinkId() : null;
    long[] files = new long[1];
    java.util.function.Consumer<Transaction> update =
        tx -> {
          DeleteFiles delete = tx.newDelete();
          List<String> reverted = new ArrayList<>();
          files[0] = 0;
          for (Snapshot s : plan.newer()) {
            reverted.add(s.summary().get(SnapshotSummaryKeys.BATCH_ID));
            for (DataFile f :
                SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles()) {
              delete.deleteFile(f.location());
              files[0]++;
            }
          }
          delete.set(SnapshotSummaryKeys.LINEAGE, plan.lineage());
          if (plan.primary()) {
            Snapshot oldest = plan.newer().get(plan.newer().size() - 1);
            Snapshot parent = oldest.parentId() == null ? null : table.snapshot(oldest.parentId());
            Optional<SinkPositions> kept =
                parent == null ? Optional.empty() : TablePositions.readSink(table, sinkId, parent);
            Map<String, String> entries =
                kept.isPresent()
                    ? TablePositions.entries(table.snapshot(kept.get().snapshotId()).summary())
                    : TablePositions.summary(
                        sinkId, removed == null ? KafkaIds.unknown() : removed.ids(), Map.of());
            entries.forEach(delete::set);
          }
          delete.set(SnapshotSummaryKeys.REVERTED_BATCHES, String.join(",", reverted));
          delete.commit();
        };
    if (sinkId != null) {
      TablePositions.commitWithTag(table, sinkId, update);
    } else {
      Transaction tx = table.newTransaction();
      update.accept(tx);
      tx.commitTransaction();
    }
    LOG.warn(
        "Restored from a state older than the table: removed {} batches ({} files) committed after it by this "
            + "sink lineage from {}; their rows are replayed from Kafka and committed again",
        plan.newer().size(),
        files[0],
        table.name());
    return plan.newer().size();
  }

  /**
   * Another lineage of this sink committed after the restored state: the replay would commit its
   * records again. Suppresses restarts: restoring the same state again cannot succeed.
   */
  public static final class AnotherLineageCommittedException extends SuppressRestartsException {
    AnotherLineageCommittedException(
        String table, String sinkId, String lineage, Snapshot newer, String past) {
      super(
          new IllegalStateException(
              "Refusing to restore: this state is of lineage "
                  + lineage
                  + " of sink id '"
                  + sinkId
                  + "', but lineage "
                  + newer.summary().get(SnapshotSummaryKeys.LINEAGE)
                  + " of the same sink committed to "
                  + table
                  + " after it (snapshot "
                  + newer.snapshotId()
                  + ", Flink job "
                  + newer.summary().get(SnapshotSummaryKeys.FLINK_JOB_ID)
                  + ", checkpoint "
                  + newer.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID)
                  + (past.isEmpty() ? "" : "; its positions pass the state's: " + past)
                  + "), so replaying from this state would commit those records twice. Nothing was"
                  + " changed. Way out: start the job without state (no -s: it resumes from the"
                  + " positions the table records), restore a savepoint of lineage "
                  + newer.summary().get(SnapshotSummaryKeys.LINEAGE)
                  + ", or roll the table back to before snapshot "
                  + newer.snapshotId()
                  + ". See operations.md, Savepoint and upgrade."));
    }
  }

  /**
   * The restored state counts batches as committed that a restore of an older state has removed
   * since: their records would be missing for good. Suppresses restarts: restoring the same state
   * again cannot succeed.
   */
  public static final class BatchesRevertedException extends SuppressRestartsException {
    BatchesRevertedException(String table, String lineage, Snapshot revert, int batches) {
      super(
          new IllegalStateException(
              "Refusing to restore: this state of lineage "
                  + lineage
                  + " counts "
                  + batches
                  + " batches as committed to "
                  + table
                  + " that a restore of an older state of the same lineage removed since (snapshot "
                  + revert.snapshotId()
                  + "); their records lie below this state's offsets, so replaying from it would"
                  + " leave them out. Nothing was changed. Way out: start the job without state (no"
                  + " -s: it resumes from the positions the table records, which are from before"
                  + " that removal, so those records are read again), or restore a savepoint taken"
                  + " after snapshot "
                  + revert.snapshotId()
                  + ". See operations.md, Savepoint and upgrade."));
    }
  }

  /**
   * The restored state is older than commits whose files table maintenance has since rewritten:
   * their rows cannot be removed, and replaying them would commit them twice. Suppresses restarts:
   * restoring the same state again cannot succeed.
   */
  static final class RewrittenByMaintenanceException extends SuppressRestartsException {
    RewrittenByMaintenanceException(Plan plan) {
      super(new IllegalStateException(message(plan)));
    }

    private static String message(Plan plan) {
      Set<String> batches = new HashSet<>();
      plan.newer().forEach(s -> batches.add(s.summary().get(SnapshotSummaryKeys.BATCH_ID)));
      Map.Entry<String, String> first = plan.rewritten().entrySet().iterator().next();
      return "Cannot restore this state: it is older than "
          + batches.size()
          + " batches this sink (lineage "
          + plan.lineage()
          + ") committed to "
          + plan.table().name()
          + " after it, and table maintenance rewrote "
          + plan.rewritten().size()
          + " of their files (e.g. "
          + first.getKey()
          + ", removed by "
          + first.getValue()
          + "), so their rows can no longer be removed before the replay, which would commit them twice. Nothing "
          + "was changed. Way out: start the job without state (no -s; with kafka.starting-offsets: table and "
          + "source.skip-committed: true, the defaults, it resumes from the positions the table records and skips "
          + "what the table holds), or restore a checkpoint or savepoint taken after those commits. "
          + "See operations.md, Savepoint and upgrade.";
    }
  }
}
