package org.spatialingest;

import java.util.Set;
import org.spatialingest.table.CommittedRecords;
import org.spatialingest.table.StartPositions;

/**
 * What a job starts from, decided once before its graph is built ({@link
 * SpatialIngestJob#decideStart}) and passed as this value to the source, the resume filter and the
 * sink, so all three agree on it.
 *
 * @param positions this sink's positions that apply to the Kafka it reads now, or a file source's
 *     inputs ({@link StartPositions})
 * @param resumeSnapshot on a start without state, the telemetry table's snapshot the resume
 *     filter's skip is fixed at (tagged: {@link org.spatialingest.table.ResumeTags}); -1 for none
 *     or for a restore, whose state names it
 * @param rejectsResumeSnapshot the same for the rejects table
 * @param committedWhole a file source's input files not read at all: every line of them this run
 *     would read is committed at those snapshots ({@link
 *     org.spatialingest.source.FileStartCheck#committedWhole}); empty for Kafka and a restore
 * @param committed what the tables hold at those snapshots, read once where the job is built, of
 *     the files that are read (the resume filter's skip); null where the filter reads it itself (a
 *     Kafka source, a restore: its state names the snapshots)
 */
public record JobStart(
    StartPositions positions,
    long resumeSnapshot,
    long rejectsResumeSnapshot,
    Set<String> committedWhole,
    CommittedRecords committed) {
  public JobStart {
    committedWhole = Set.copyOf(committedWhole);
  }

  public JobStart(StartPositions positions, long resumeSnapshot, long rejectsResumeSnapshot) {
    this(positions, resumeSnapshot, rejectsResumeSnapshot, Set.of(), null);
  }

  public long[] resumeAt() {
    return new long[] {resumeSnapshot, rejectsResumeSnapshot};
  }
}
