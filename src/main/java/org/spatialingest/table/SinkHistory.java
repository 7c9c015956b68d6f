package org.spatialingest.table;

import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * How far back the sink trusts a table's history: the one owner of the clock slack every look-up of
 * the sink's own commits allows, and of the rule that tells a history cut by expiry from a whole
 * one. The committer (is a batch already committed?), the restore (which batches came after the
 * state?), the orphan clean-up (which files did recent snapshots add?), the resume filter (which
 * rejects are newer than the positions?) and the running gap recorder (is this gap recorded
 * already?) all walk it the same way.
 *
 * <p>Cost: a walk reads snapshot metadata the table has already loaded, newest first, and stops at
 * its horizon; no manifest is read here.
 */
public final class SinkHistory {
  /**
   * How far a time one process took (a TaskManager stamping a batch, the state's time) may lie
   * after a snapshot time another took (the catalog's commit): clock skew between machines plus the
   * time between a batch's creation and its commit. A look-up for what was made at {@code t}
   * reaches back to {@code t - SLACK}.
   */
  public static final Duration SLACK = Duration.ofMinutes(10);

  private SinkHistory() {}

  /** The oldest snapshot time that may hold what was made at {@code millis}. */
  public static long horizon(long millis) {
    return millis == Long.MIN_VALUE ? millis : millis - SLACK.toMillis();
  }

  /**
   * The current snapshot's ancestors that may hold what was made at {@code millis}: newest first,
   * down to the first one older than {@link #horizon}, which is not visited.
   */
  public static Window since(Table table, long millis) {
    return downTo(table, horizon(millis));
  }

  /**
   * The current snapshot's ancestors, newest first, down to the first one older than {@code
   * horizonMillis}, which is not visited.
   */
  public static Window downTo(Table table, long horizonMillis) {
    return new Window(table, table.currentSnapshot(), horizonMillis);
  }

  /**
   * The current snapshot's whole history, newest first (for a caller that stops by its own rule).
   */
  public static Window whole(Table table) {
    return from(table, table.currentSnapshot());
  }

  /** {@code snapshot} and its whole history, newest first. */
  public static Window from(Table table, Snapshot snapshot) {
    return new Window(table, snapshot, Long.MIN_VALUE);
  }

  /**
   * When the newest commit of sink {@code sinkId} (any lineage) in the table's snapshots was made;
   * 0 if none. A sink commit whose summary names no sink (no positions, or formats 1 and 2) counts
   * as this sink's: a later horizon only keeps more files.
   */
  public static long lastSinkCommitMillis(Table table, String sinkId) {
    long last = 0;
    for (Snapshot s : table.snapshots()) {
      if (s.summary().containsKey(SnapshotSummaryKeys.BATCH_ID)) {
        SinkPositions positions = TablePositions.fromSummary(s.summary(), s.snapshotId());
        if (positions == null || positions.ofSink(sinkId)) {
          last = Math.max(last, s.timestampMillis());
        }
      }
    }
    return last;
  }

  /**
   * A walk back through the current snapshot's ancestors to a horizon. After it, {@link
   * #cutByExpiry} and {@link #mayHaveExpired} tell whether snapshots it should have seen are gone.
   */
  public static final class Window implements Iterable<Snapshot> {
    private final Table table;
    private final Snapshot start;
    private final long horizonMillis;
    private Snapshot oldest;
    private boolean cutByExpiry;

    private Window(Table table, Snapshot start, long horizonMillis) {
      this.table = table;
      this.start = start;
      this.horizonMillis = horizonMillis;
    }

    /**
     * After a walk that was not stopped early: whether it ended at a parent that is gone (expired)
     * before reaching its horizon, so older snapshots of the window may be missing.
     */
    public boolean cutByExpiry() {
      return cutByExpiry;
    }

    /**
     * The one expiry rule: after the walk, whether a snapshot committed at or after {@code millis}
     * may have been expired (the walk was cut by expiry at a snapshot no older than {@code
     * millis}). A look-up that must not guess refuses then.
     */
    public boolean mayHaveExpired(long millis) {
      return cutByExpiry && oldest != null && oldest.timestampMillis() >= millis;
    }

    /** The oldest snapshot the walk visited; null before the walk or when the table has none. */
    public Snapshot oldest() {
      return oldest;
    }

    @Override
    public Iterator<Snapshot> iterator() {
      oldest = null;
      cutByExpiry = false;
      return new Iterator<>() {
        private Snapshot next = visible(start);

        private Snapshot visible(Snapshot s) {
          return s == null || s.timestampMillis() < horizonMillis ? null : s;
        }

        @Override
        public boolean hasNext() {
          return next != null;
        }

        @Override
        public Snapshot next() {
          if (next == null) {
            throw new NoSuchElementException();
          }
          Snapshot s = next;
          oldest = s;
          Long parentId = s.parentId();
          Snapshot parent = parentId == null ? null : table.snapshot(parentId);
          if (parentId != null && parent == null) {
            cutByExpiry = true;
          }
          next = visible(parent);
          return s;
        }
      };
    }
  }
}
