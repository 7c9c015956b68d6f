package org.spatialingest.sink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;

/**
 * Makes the table agree with the state a job restores from.
 *
 * <p>When a job restores from a checkpoint or savepoint older than its last commits (an older savepoint, a rollback),
 * the Kafka source replays from the restored offsets, so rows of batches committed after that state would be
 * committed a second time. Iceberg's own sink avoids the duplicates by skipping checkpoint ids it has seen, and so
 * silently drops new data instead (apache/iceberg#10892). Here, every batch carries the sink's lineage (an id kept in
 * state across restores) and the restored state knows which batches it had produced; batches of the same lineage
 * committed after that point are removed in one delete snapshot before any new data flows, and the replay commits
 * their rows again, once. Other writers' snapshots and other lineages are never touched.
 *
 * <p>Limit: if table maintenance rewrote a reverted batch's files into larger ones in the meantime, those rows cannot
 * be removed file by file; this is logged as a warning.
 */
final class RestoreReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(RestoreReconciler.class);

  private RestoreReconciler() {}

  /**
   * @param lineage the restored lineage
   * @param knownBatchIds batch ids the restored state had already produced (committed or pending)
   * @param stateTimeMillis when the restored state was taken; nothing committed before it can be newer than it
   * @param primary whether the table records the sink's source positions: the revert then records the positions of
   *     the newest snapshot it keeps, so a later start without state resumes from there
   * @return the number of batches reverted
   */
  static int reconcile(Table table, String lineage, Set<String> knownBatchIds, long stateTimeMillis,
      boolean primary) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    if (current == null) {
      return 0;
    }
    List<Snapshot> newer = new ArrayList<>();
    Snapshot last = current;
    boolean reachedState = false;
    for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot)) {
      last = s;
      String batchId = s.summary().get(SnapshotSummaryKeys.BATCH_ID);
      if (batchId != null && lineage.equals(s.summary().get(SnapshotSummaryKeys.LINEAGE))) {
        if (knownBatchIds.contains(batchId)) {
          reachedState = true;
          break; // commits follow checkpoint order: everything older was produced before the restored state
        }
        if (s.timestampMillis() < stateTimeMillis) {
          reachedState = true;
          break;
        }
        newer.add(s);
      }
    }
    if (!reachedState && last.parentId() != null && last.timestampMillis() >= stateTimeMillis) {
      // the history ends in expired snapshots newer than the state: batches committed after it may be among them
      throw new IllegalStateException("cannot restore " + table.name() + " to a state taken at " + stateTimeMillis
          + " ms: its snapshots before " + last.timestampMillis() + " ms are expired, so batches committed after "
          + "the state cannot all be found and reverted. Restore from a newer state, or keep snapshots longer "
          + "(maintenance.expire-snapshots.max-age above the age of the oldest state the job may be restored from)");
    }
    if (newer.isEmpty()) {
      return 0;
    }
    DeleteFiles delete = table.newDelete();
    List<String> reverted = new ArrayList<>();
    long files = 0;
    for (Snapshot s : newer) {
      reverted.add(s.summary().get(SnapshotSummaryKeys.BATCH_ID));
      for (DataFile f : SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles()) {
        delete.deleteFile(f.location());
        files++;
      }
    }
    delete.set(SnapshotSummaryKeys.LINEAGE, lineage);
    if (primary) {
      Snapshot oldest = newer.get(newer.size() - 1);
      Map<String, Long> kept = oldest.parentId() == null ? Map.of()
          : TablePositions.readAsOf(table, table.snapshot(oldest.parentId()));
      delete.set(SnapshotSummaryKeys.POSITIONS, TablePositions.encode(kept));
    }
    delete.set(SnapshotSummaryKeys.REVERTED_BATCHES, String.join(",", reverted));
    delete.commit();
    LOG.warn("Restored from a state older than the table: removed {} batches ({} files) committed after it by this "
        + "sink lineage; their rows are replayed from Kafka and committed again", newer.size(), files);
    return newer.size();
  }
}
