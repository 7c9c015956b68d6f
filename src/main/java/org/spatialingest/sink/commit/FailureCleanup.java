package org.spatialingest.sink.commit;

import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.recovery.CleanupPasses;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.StagingReferences;

/**
 * When and what the aggregator removes of what a failure left behind: after the first checkpoint
 * that completes since a (re)start, and once more when no task of the failed attempt can still
 * write ({@link CleanupPasses}), {@link OrphanCleaner} removes this sink's staging runs, batch
 * files and data files that no current writer, pending batch or kept state references; retried
 * after the next checkpoint if it fails.
 *
 * <p>It tracks which writers (by token) reported before each barrier (the current ones) and, per
 * earlier writer, the highest checkpoint whose staging runs the aggregator's state may reference
 * ({@link StagingReferences}): the state carries those horizons, so a restore that fails again
 * before the clean-up does not leave the first failure's runs behind for good.
 *
 * <p>Cost: a set of writer tokens per checkpoint in flight; a clean-up pass lists the sink's
 * staging prefix and reads the tables' recent metadata (twice per start).
 */
final class FailureCleanup {
  private static final Logger LOG = LoggerFactory.getLogger(FailureCleanup.class);

  private final CleanupPasses passes;

  /**
   * staging runs of barriers after this checkpoint are orphans (-1: every run of a writer that is
   * not current)
   */
  private final long restoredCheckpointId;

  /**
   * per earlier writer token, the highest checkpoint whose staging runs by that writer the state
   * may reference; {@code null} after restoring a state of a build that did not keep them, until
   * the first clean-up
   */
  private Map<String, Long> stagingHorizons;

  /** data files created before this are not considered */
  private final long orphanHorizon;

  private final Set<String> reportedTokens = new HashSet<>();
  private final Map<Long, Set<String>> tokensAtBarrier = new HashMap<>();

  private FailureCleanup(
      CleanupPasses passes,
      long restoredCheckpointId,
      Map<String, Long> stagingHorizons,
      long orphanHorizon) {
    this.passes = passes;
    this.restoredCheckpointId = restoredCheckpointId;
    this.stagingHorizons = stagingHorizons;
    this.orphanHorizon = orphanHorizon;
  }

  /** After a start without state: every run of a writer that is not current is an orphan. */
  static FailureCleanup afterStart(CleanupPasses passes, long orphanHorizon) {
    return new FailureCleanup(passes, -1, new HashMap<>(), orphanHorizon);
  }

  /**
   * After a restore of checkpoint {@code checkpointId} whose state kept {@code stagingHorizons}
   * ({@code null}: a build that did not keep them).
   */
  static FailureCleanup afterRestore(
      CleanupPasses passes,
      long checkpointId,
      Map<String, Long> stagingHorizons,
      long orphanHorizon) {
    return new FailureCleanup(
        passes,
        checkpointId,
        stagingHorizons == null ? null : new HashMap<>(stagingHorizons),
        orphanHorizon);
  }

  /** A writer (its token) reported since the last barrier: it is current. */
  void reported(String writerToken) {
    reportedTokens.add(writerToken);
  }

  /** The barrier of {@code checkpointId}: the writers reported before it are that checkpoint's. */
  void barrier(long checkpointId) {
    tokensAtBarrier.put(checkpointId, new HashSet<>(reportedTokens));
    reportedTokens.clear();
  }

  /**
   * The staging horizons a state taken at {@code checkpointId} keeps: the earlier writers' and the
   * writers at that barrier up to it; {@code null} while still unknown (a restore of it keeps the
   * earlier rule).
   */
  Map<String, Long> horizonsAt(long checkpointId) {
    if (stagingHorizons == null) {
      return null;
    }
    Map<String, Long> horizons = new HashMap<>(stagingHorizons);
    for (String token : tokensAtBarrier.getOrDefault(checkpointId, Set.of())) {
      horizons.merge(token, checkpointId, Math::max);
    }
    return horizons;
  }

  /** The pending batches' files, read when a clean-up runs. */
  @FunctionalInterface
  interface PendingFiles {
    Set<String> read() throws IOException;
  }

  /**
   * Checkpoint {@code checkpointId} completed: if a pass is due, removes what a failure left behind
   * in {@code tables}, keeping the current writers' runs, the files of {@code ownToken}'s batches
   * and of the pending batches. Housekeeping only: a failure is logged and retried after the next
   * checkpoint.
   */
  void checkpointComplete(
      long checkpointId,
      String ownToken,
      SinkTables tables,
      SinkScope scope,
      PendingFiles pendingFiles) {
    Set<String> current = tokensAtBarrier.remove(checkpointId);
    tokensAtBarrier.keySet().removeIf(id -> id < checkpointId);
    if (current == null || !passes.due(System.currentTimeMillis())) {
      return;
    }
    SinkFaults.reach(SinkFaults.Point.BEFORE_ORPHAN_CLEANUP);
    StagingReferences references = new StagingReferences(restoredCheckpointId, stagingHorizons);
    Set<String> kept = new HashSet<>();
    Set<String> currentTokens = new HashSet<>(current);
    currentTokens.add(ownToken); // the batch files this instance stores are current too
    try {
      // read before the cleaner looks at the tables: a batch file gone by then was committed
      Set<String> protectedFiles = pendingFiles.read();
      for (SinkTable t : tables) {
        try (TableLoader loader = t.loader().clone()) {
          loader.open();
          Table table = loader.loadTable();
          OrphanCleaner.clean(
              table, scope, currentTokens, references, orphanHorizon, protectedFiles, kept);
        }
      }
    } catch (Exception e) {
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
    passes.passed();
  }
}
