package org.spatialingest.table;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;

/**
 * The snapshots a start without state fixes its skip at ({@code source/ResumeFilter}: what the
 * tables already hold), tagged {@code spatial-ingest-resume-<sink.id>} on each table so that no
 * expiry (another writer's {@code expire_snapshots}, {@code retain_last => 1}) takes them while a
 * restore of that start's checkpoints may still recompute the skip from them. Decided once where
 * the job is built, so every subtask and every restore reads the same snapshots. The next start
 * without state of the same sink moves the tag; until then it keeps one snapshot per table (and the
 * data files it references) from expiry.
 */
@PublicEvolving
public final class ResumeTags {
  private static final String PREFIX = "spatial-ingest-resume-";

  private ResumeTags() {}

  public static String tagName(String sinkId) {
    return PREFIX + sinkId;
  }

  /**
   * Tags {@code table}'s current snapshot for {@code sinkId}, moving the tag of an earlier start;
   * one retry on a concurrent commit.
   *
   * @return the tagged snapshot's id, or -1 when the table has none
   */
  public static long pin(Table table, String sinkId) {
    for (int attempt = 0; ; attempt++) {
      table.refresh();
      Snapshot current = table.currentSnapshot();
      if (current == null) {
        return -1;
      }
      String tag = tagName(sinkId);
      try {
        if (table.refs().containsKey(tag)) {
          table.manageSnapshots().replaceTag(tag, current.snapshotId()).commit();
        } else {
          table.manageSnapshots().createTag(tag, current.snapshotId()).commit();
        }
        return current.snapshotId();
      } catch (CommitFailedException e) {
        if (attempt > 0) {
          throw e;
        }
      }
    }
  }
}
