package org.spatialingest.sink.commit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFileManifests;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.FileDeletes;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkFieldTotals;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.options.SnapshotExpiry;
import org.spatialingest.table.PositionsListener;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SinkHistory;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TablePositions;

/**
 * Commits each checkpoint's {@link FileBatch} after the checkpoint completed: one append snapshot
 * per table, the secondary tables (rejects) first and the primary table last, so a primary
 * snapshot's positions never claim a record whose reject is not yet committed. The primary table
 * gets a snapshot for every batch (even one with only rejects), because it carries the positions.
 * Then the batch's staging runs are deleted and the {@link PositionsListener} is told.
 *
 * <p>Idempotent per table across restarts without trusting checkpoint ids: the batch id (a digest
 * of its file paths) goes into each snapshot summary and is looked up in the table's recent
 * snapshots before every (re)commit.
 */
@Internal
public final class IcebergBatchCommitter implements Committer<FileBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(IcebergBatchCommitter.class);

  private final List<TableLoader> loaders = new ArrayList<>();
  private final List<Table> tables = new ArrayList<>();
  private final PositionsListener listener;
  private final String jobId;
  private final CommitterMetrics metrics;
  private final StartPositions start;
  private final Counter gapRecords;
  private final FileDeletes deletes = new FileDeletes();
  private final SnapshotExpiry expiry;

  /** Per table, this committer's commits to it since it last expired its snapshots. */
  private final int[] commitsSinceExpiry;

  public IcebergBatchCommitter(
      SinkTables sinkTables, PositionsListener listener, CommitterInitContext context) {
    this(sinkTables, listener, StartPositions.none("spatial-sink"), null, context);
  }

  /**
   * @param start the sink id and Kafka ids the positions are recorded with, and what the first
   *     commit of the lineage records ({@link StartPositions#notes})
   * @param expiry how the tables' snapshots are expired after this committer's commits, or null for
   *     no expiry
   */
  public IcebergBatchCommitter(
      SinkTables sinkTables,
      PositionsListener listener,
      StartPositions start,
      SnapshotExpiry expiry,
      CommitterInitContext context) {
    for (SinkTable t : sinkTables) {
      TableLoader loader = t.loader().clone();
      loader.open();
      loaders.add(loader);
      tables.add(loader.loadTable());
    }
    this.listener = listener;
    this.jobId = context.getJobInfo().getJobId().toHexString();
    this.metrics = new CommitterMetrics(context.metricGroup());
    this.start = start;
    this.expiry = expiry;
    this.commitsSinceExpiry = new int[tables.size()];
    // records the job went on without (kafka.on-gap: continue), as recorded in the summary
    this.gapRecords = context.metricGroup().counter("kafkaGapRecords");
  }

  @Override
  public void commit(Collection<CommitRequest<FileBatch>> requests) {
    List<CommitRequest<FileBatch>> ordered = new ArrayList<>(requests);
    ordered.sort(Comparator.comparingLong(r -> r.getCommittable().checkpointId()));
    for (CommitRequest<FileBatch> request : ordered) {
      commit(request.getCommittable());
    }
  }

  private void commit(FileBatch batch) {
    if (batch.fileCount() == 0) {
      return;
    }
    String batchId = batch.batchId();
    long startedMillis = System.currentTimeMillis();
    boolean committedAny = false;
    ClosedFiles closed = null;
    Map<Integer, TableFiles> files = Map.of();
    // the primary table is committed last: if it has the batch, every table has, and a stored
    // batch's files need not be read (they may be gone: deleted after that commit)
    Table primary = tables.get(SinkTables.PRIMARY);
    primary.refresh();
    if (alreadyCommitted(primary, batchId, batch.createdAtMillis())) {
      LOG.info(
          "Batch {} of checkpoint {} is already committed; not committing it again",
          batchId,
          batch.checkpointId());
      // a re-commit after a lost acknowledgement: its runs' deletes may not have run either
      if (batch.stored() == null || batch.stored().exists(primary.io())) {
        files = TableFiles.of(batch.closed(primary.io()));
      }
    } else {
      closed = batch.closed(primary.io());
      files = TableFiles.of(closed);
      for (int t = tables.size() - 1; t >= 0; t--) {
        TableFiles ofTable = files.getOrDefault(t, TableFiles.none(t));
        if (t != SinkTables.PRIMARY && ofTable.isEmpty()) {
          continue;
        }
        if (commitTable(t, batch, batchId, ofTable, closed)) {
          committedAny = true;
          commitsSinceExpiry[t]++;
        }
      }
    }
    long end = System.currentTimeMillis();
    // the runs of the files just committed, per table, and the stored batch, in the background:
    // the next commit does not wait for them
    Map<Integer, List<String>> runs = new TreeMap<>();
    SinkFieldTotals all = new SinkFieldTotals();
    for (TableFiles ofTable : files.values()) {
      all.addAll(ofTable.fields());
      runs.computeIfAbsent(ofTable.table(), t -> new ArrayList<>())
          .addAll(ofTable.fields().consumedStaging());
    }
    if (batch.stored() != null) {
      runs.computeIfAbsent(SinkTables.PRIMARY, t -> new ArrayList<>())
          .add(batch.stored().location());
    }
    runs.forEach((t, paths) -> deletes.deleteLater(tables.get(t).io(), paths));
    if (committedAny) {
      metrics.batchCommitted(all, startedMillis, end);
      LOG.info(
          "Committed checkpoint {}: {} files, {} rows in {} ms (batch {})",
          batch.checkpointId(),
          all.files(),
          files.getOrDefault(SinkTables.PRIMARY, TableFiles.none(SinkTables.PRIMARY)).rows(),
          end - startedMillis,
          batchId);
    }
    expireSnapshotsIfDue();
    try {
      listener.committed(batch.positions());
    } catch (Exception e) {
      LOG.warn(
          "Commit listener failed for checkpoint {} (the commit itself succeeded)",
          batch.checkpointId(),
          e);
    }
  }

  /**
   * Expires the snapshots of each table this committer has committed to {@link
   * SnapshotExpiry#everyCommits} times since its last expiry ({@link SnapshotExpiry}). A failed
   * expiry is logged and tried again at the next commit: the commits it follows are in the table,
   * and a job does not restart for its maintenance.
   */
  private void expireSnapshotsIfDue() {
    if (expiry == null) {
      return;
    }
    for (int t = 0; t < tables.size(); t++) {
      if (commitsSinceExpiry[t] < expiry.everyCommits()) {
        continue;
      }
      Table table = tables.get(t);
      long startedMillis = System.currentTimeMillis();
      long olderThan = startedMillis - expiry.maxAge().toMillis();
      try {
        table.refresh();
        int before = count(table.snapshots());
        if (before > expiry.retainLast() && hasSnapshotOlderThan(table, olderThan)) {
          table
              .expireSnapshots()
              .expireOlderThan(olderThan)
              .retainLast(expiry.retainLast())
              .cleanExpiredFiles(true)
              .commit();
          table.refresh();
          LOG.info(
              "Expired {} snapshots of {} older than {} ({} kept) in {} ms",
              before - count(table.snapshots()),
              table.name(),
              expiry.maxAge(),
              count(table.snapshots()),
              System.currentTimeMillis() - startedMillis);
        }
        commitsSinceExpiry[t] = 0;
      } catch (RuntimeException e) {
        LOG.warn(
            "Snapshot expiry of {} failed; it is tried again after the next commit",
            table.name(),
            e);
      }
    }
  }

  private static boolean hasSnapshotOlderThan(Table table, long millis) {
    for (Snapshot s : table.snapshots()) {
      if (s.timestampMillis() < millis) {
        return true;
      }
    }
    return false;
  }

  private static int count(Iterable<Snapshot> snapshots) {
    int n = 0;
    for (Snapshot ignored : snapshots) {
      n++;
    }
    return n;
  }

  /**
   * @return false if the table already had this batch
   */
  private boolean commitTable(
      int index, FileBatch batch, String batchId, TableFiles files, ClosedFiles closed) {
    Table table = tables.get(index);
    table.refresh();
    if (alreadyCommitted(table, batchId, batch.createdAtMillis())) {
      LOG.info(
          "Batch {} of checkpoint {} is already in {}; not committing it again",
          batchId,
          batch.checkpointId(),
          table.name());
      return false;
    }
    Consumer<AppendFiles> addFiles = filesAdder(table, index, batch, files, closed);
    if (index != SinkTables.PRIMARY) {
      SinkFaults.reach(SinkFaults.Point.BEFORE_COMMIT);
      AppendFiles append = table.newAppend(); // merges manifests, see below
      addFiles.accept(append);
      summary(batch, batchId, files, false).forEach(append::set);
      append.commit();
    } else {
      boolean[] first = new boolean[1];
      SinkFaults.reach(SinkFaults.Point.BEFORE_COMMIT);
      // the append and the sink's tag in one commit: the newest positions stay reachable through
      // snapshot expiry and other writers' commits; checked again on every attempt
      TablePositions.commitWithTag(
          table,
          start.sinkId(),
          tx -> {
            Snapshot tagged = TablePositions.taggedSnapshot(table, start.sinkId());
            boolean ownTag =
                tagged != null
                    && batch.lineage().equals(tagged.summary().get(SnapshotSummaryKeys.LINEAGE));
            if (ownTag && !TablePositions.isInHistory(table, tagged.snapshotId())) {
              throw rolledBack(table, tagged);
            }
            // Iceberg's merging append, as its own Flink committers use: once the snapshot has
            // commit.manifest.min-count-to-merge manifests (100) they are merged, so a commit every
            // L does not grow the manifest list (and every reader's planning) without bound
            AppendFiles append = tx.newAppend();
            addFiles.accept(append);
            summary(batch, batchId, files, true).forEach(append::set);
            if (!ownTag) {
              start.notes().forEach(append::set); // the lineage's first commit
            }
            append.commit();
            SinkFaults.reach(SinkFaults.Point.IN_COMMIT_TRANSACTION);
            if (start.filesRecord() != null) {
              // the input files' fingerprints: kept as long as a snapshot names them
              start.filesRecord().register(tx);
            }
            first[0] = !ownTag;
          });
      boolean ownTag = !first[0];
      if (!ownTag && start.notes().containsKey(SnapshotSummaryKeys.GAP_RECORDS)) {
        gapRecords.inc(Long.parseLong(start.notes().get(SnapshotSummaryKeys.GAP_RECORDS)));
      }
    }
    SinkFaults.reach(SinkFaults.Point.AFTER_COMMIT);
    metrics.filesCommitted(files.count(), files.bytes(), files.rows());
    return true;
  }

  /**
   * How the table's files of the batch enter an append. A stored batch whose groups' manifests a
   * format-2 table can adopt: they are written once, concatenated, as the batch's manifest(s) in
   * the table's metadata directory ({@link BatchManifests}, named after the stored batch: a
   * re-commit writes the same file) and appended as they are, so no data file is decoded or written
   * again here. Otherwise (earlier layouts, inline batches of earlier states, tables of format 1 or
   * 3) each data file is appended, decoded from its group.
   */
  private Consumer<AppendFiles> filesAdder(
      Table table, int index, FileBatch batch, TableFiles files, ClosedFiles closed) {
    if (files.isEmpty()) {
      return append -> {};
    }
    if (files.appendable() != null
        && batch.stored() != null
        && table instanceof HasTableOperations ops
        && ops.operations().current().formatVersion()
            == ClosedFileManifests.MANIFEST_FORMAT_VERSION) {
      String stem =
          ops.operations()
              .metadataFileLocation(
                  SinkFileNames.batchManifestStem(batch.stored().location(), index));
      Supplier<List<ManifestFile>> write =
          () -> {
            try {
              return BatchManifests.write(table.io(), stem, table.specs(), files.appendable());
            } catch (IOException e) {
              throw new UncheckedIOException(
                  "cannot write the manifest of batch " + batch.batchId() + " for " + table.name(),
                  e);
            }
          };
      List<ManifestFile> manifests = write.get();
      SinkFaults.reach(SinkFaults.Point.AFTER_BATCH_MANIFEST);
      String addedBytes = Long.toString(files.bytes());
      int[] attempts = {0};
      return append -> {
        // A transaction that fails after one of its attempts merged manifests deletes the batch's
        // manifest in its clean-up (a merging attempt hands an appended manifest to the table), and
        // the next transaction adopts it as it is without reading it: each later attempt writes it
        // again (the same bytes), or that snapshot could list a missing file (the full chaos run
        // found one, with a second job committing to the same table)
        if (attempts[0]++ > 0) {
          write.get();
        }
        manifests.forEach(append::appendManifest);
        // Iceberg counts an adopted manifest's files and rows but not their bytes (a manifest
        // descriptor has no size field): without this, the snapshot's total-files-size stops
        // counting; the writers' totals are exact
        append.set(SnapshotSummary.ADDED_FILE_SIZE_PROP, addedBytes);
      };
    }
    List<ClosedFile> decoded = files.decodedFrom(closed);
    return append -> decoded.forEach(f -> append.appendFile(f.file()));
  }

  private Map<String, String> summary(
      FileBatch batch, String batchId, TableFiles ofTable, boolean primary) {
    SinkFieldTotals files = ofTable.fields();
    Map<String, String> s = new LinkedHashMap<>();
    s.put(SnapshotSummaryKeys.BATCH_ID, batchId);
    s.put(SnapshotSummaryKeys.LINEAGE, batch.lineage());
    s.put(SnapshotSummaryKeys.FLINK_JOB_ID, jobId);
    s.put(SnapshotSummaryKeys.CHECKPOINT_ID, Long.toString(batch.checkpointId()));
    s.put(SnapshotSummaryKeys.ROWS, Long.toString(ofTable.rows()));
    s.put(SnapshotSummaryKeys.FILES, Integer.toString(files.files()));
    s.put(SnapshotSummaryKeys.FILE_BYTES, Long.toString(ofTable.bytes()));
    s.put(SnapshotSummaryKeys.BUFFERED_BYTES, Long.toString(files.bufferedBytes()));
    if (files.files() > 0) {
      s.put(SnapshotSummaryKeys.MIN_INGEST_MS, Long.toString(files.minIngestMillis()));
      s.put(SnapshotSummaryKeys.MAX_INGEST_MS, Long.toString(files.maxIngestMillis()));
    }
    files
        .byReason()
        .forEach(
            (r, n) -> s.put(SnapshotSummaryKeys.CLOSED_PREFIX + r.code(), Integer.toString(n)));
    if (primary) {
      s.putAll(TablePositions.summary(start.sinkId(), start.ids(), batch.positions()));
      if (start.filesRecord() != null) {
        s.put(SnapshotSummaryKeys.FILE_INPUTS, start.filesRecord().location());
      }
    }
    return s;
  }

  /**
   * The sink's last commit (its tag) is no longer in the table's history: the table was rolled back
   * or replaced under the running job. Committing would write positions that claim records the
   * table no longer holds.
   */
  private PositionsRefusedException rolledBack(Table table, Snapshot tagged) {
    return new PositionsRefusedException(
        "Stopping: "
            + table.name()
            + " no longer holds this sink's last commit (snapshot "
            + tagged.snapshotId()
            + ", tag "
            + TablePositions.tagName(start.sinkId())
            + "), which is not in the history of the current snapshot "
            + table.currentSnapshot().snapshotId()
            + ": the table was rolled back or replaced under the running job. Committing now would record "
            + "positions past records the table no longer holds; nothing was committed. Way out: start the job "
            + "without state (no savepoint): it resumes from the positions of the table's current snapshot, so "
            + "the records the rollback removed are read again while Kafka still has them (see operations.md, Operator actions)");
  }

  @VisibleForTesting
  public static boolean alreadyCommitted(Table table, String batchId, long createdAtMillis) {
    SinkHistory.Window window = SinkHistory.since(table, createdAtMillis);
    for (Snapshot s : window) {
      if (batchId.equals(s.summary().get(SnapshotSummaryKeys.BATCH_ID))) {
        return true;
      }
    }
    if (window.mayHaveExpired(createdAtMillis)) {
      // its commit may have been expired with the snapshots before the oldest one left
      throw new IllegalStateException(
          "cannot tell whether batch "
              + batchId
              + " (made at "
              + createdAtMillis
              + " ms) is already in "
              + table.name()
              + ": its snapshots before "
              + window.oldest().timestampMillis()
              + " ms are "
              + "expired. Restore from a newer state, or keep snapshots longer (maintenance.expire-snapshots.max-age "
              + "above the age of the oldest state the job may be restored from)");
    }
    return false;
  }

  @Override
  public void close() throws Exception {
    deletes.close();
    listener.close();
    for (TableLoader loader : loaders) {
      loader.close();
    }
  }
}
