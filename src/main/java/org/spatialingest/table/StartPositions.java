package org.spatialingest.table;

import java.io.Serializable;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * What a job starts from, decided once where it is built: its sink id, the Kafka ids it reads
 * ({@link KafkaIds}), the recorded positions that apply to them, and the entries the first commit
 * of the new sink lineage adds to its snapshot summary to record what was not applied (a reset,
 * {@link SnapshotSummaryKeys#POSITIONS_RESET}) or skipped (gaps, {@link SnapshotSummaryKeys#GAPS}).
 *
 * @param positions per Kafka source key, where a start without state resumes
 * @param reset {@code kafka.reset-positions} when it applies to this start (every partition starts
 *     by it), else empty
 * @param notes summary entries for the lineage's first commit
 * @param files for a file source, what this start reads of each input file ({@link FileInputs}: the
 *     prefix, its hash, earlier paths); empty for Kafka
 * @param filesRecord for a file source, the fingerprints every commit of this start names and
 *     registers (this start's and every earlier one's); null for Kafka
 */
@PublicEvolving
public record StartPositions(
    String sinkId,
    KafkaIds ids,
    Map<String, Long> positions,
    String reset,
    Map<String, String> notes,
    FileInputs files,
    FileInputs.Written filesRecord)
    implements Serializable {
  public StartPositions(
      String sinkId,
      KafkaIds ids,
      Map<String, Long> positions,
      String reset,
      Map<String, String> notes) {
    this(sinkId, ids, positions, reset, notes, FileInputs.none(), null);
  }

  public StartPositions {
    positions = Map.copyOf(positions);
    notes = Map.copyOf(notes);
  }

  /** A start with nothing recorded (a file source, a new table). */
  public static StartPositions none(String sinkId) {
    return new StartPositions(sinkId, KafkaIds.unknown(), Map.of(), "", Map.of());
  }
}
