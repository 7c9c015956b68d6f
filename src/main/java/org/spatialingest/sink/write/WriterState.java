package org.spatialingest.sink.write;

import java.util.List;
import org.apache.flink.annotation.Internal;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.TableRouter;

/**
 * What a writer checkpoints: references to the staging runs that hold its buffered rows (the rows
 * themselves are written once, to the staging area, at the barrier after they arrived). Partition,
 * Hilbert key and ingest time are recomputed from the rows on restore.
 *
 * @param runs the staging runs
 * @param unstaged rows a restored state holds that no run holds: only a state of a build before
 *     staging runs has them (its rows inline, converted on read into input batches by the compat
 *     room); the writer buffers them at restore as it buffers input and stages them at the next
 *     barrier. A writer's own snapshot never has any.
 */
@Internal
public record WriterState(List<StagedRun> runs, List<RowBatch> unstaged) {
  public WriterState {
    runs = List.copyOf(runs);
    unstaged = List.copyOf(unstaged);
  }

  /** A writer's snapshot: its staging runs. */
  public WriterState(List<StagedRun> runs) {
    this(runs, List.of());
  }

  /**
   * One staging run: rows of one partition buffer of one table that arrived between two barriers.
   *
   * @param table index of the sink table
   * @param bufferId which of its partition's buffers the run belongs to (see {@link
   *     TableRouter#bufferId}); its rows return to a buffer with that id
   * @param path location of the run in the table's staging area
   * @param rows rows in the run (checked when it is read back)
   * @param parked its rows were parked: on disk only, read back when the buffer's file is written
   *     (on restore only their totals are rebuilt, not kept in memory)
   */
  public record StagedRun(int table, int bufferId, String path, long rows, boolean parked) {
    /** A run whose rows were in memory at the barrier. */
    public StagedRun(int table, int bufferId, String path, long rows) {
      this(table, bufferId, path, rows, false);
    }
  }
}
