package org.spatialingest.bench;

import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Whether a compacting job's table still gets closer to query-ready: counts the compaction's
 * rewrites (Iceberg {@code replace} snapshots) committed after a start snapshot, and how many of
 * them came after the last look that had fewer files or a median file 5 % larger. Iceberg's
 * bin-pack rewrites groups whose output stays under its own minimum file size again at every
 * trigger; such a table never gets there, and waiting out the whole bound for it only burns the
 * benchmark's time.
 */
final class CompactionProgress {
  /**
   * A median file this much larger counts as a gain: a rewrite of n files into n files writes them
   * a few bytes larger or smaller each time (seen: "Rewritten 15 files to 15 files" every trigger).
   */
  private static final double GAIN = 0.05;

  private final Table table;
  private final long startSequence;
  private QueryReady.Look best;
  private int rewrites;
  private int rewritesAtBest;

  CompactionProgress(Table table) {
    this.table = table;
    table.refresh();
    Snapshot start = table.currentSnapshot();
    this.startSequence = start == null ? -1 : start.sequenceNumber();
  }

  /** Looks at the table now (refreshed) and updates the counts. */
  QueryReady.Look look() {
    QueryReady.Look now = QueryReady.look(table);
    int n = 0;
    for (Snapshot s : table.snapshots()) {
      if (s.sequenceNumber() > startSequence && DataOperations.REPLACE.equals(s.operation())) {
        n++;
      }
    }
    rewrites = n;
    if (best == null
        || now.files() < best.files()
        || now.p50FileBytes() > best.p50FileBytes() * (1 + GAIN)) {
      best = now;
      rewritesAtBest = n;
    }
    return now;
  }

  /** Rewrites committed since the start snapshot, as of the last {@link #look()}. */
  int rewrites() {
    return rewrites;
  }

  /** At least {@code limit} rewrites since the table last got fewer or larger files. */
  boolean stalled(int limit) {
    return rewrites - rewritesAtBest >= limit;
  }

  @Override
  public String toString() {
    return rewrites + " rewrites, the last " + (rewrites - rewritesAtBest) + " without gain";
  }
}
