package org.spatialingest;

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
 */
public record JobStart(StartPositions positions, long resumeSnapshot, long rejectsResumeSnapshot) {
  public long[] resumeAt() {
    return new long[] {resumeSnapshot, rejectsResumeSnapshot};
  }
}
