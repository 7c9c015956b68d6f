package org.spatialingest.sink.commit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.io.FileIO;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.WriterReport;

/**
 * Turns the writers' reports between two barriers into one {@link FileBatch}: their closed files,
 * stored once ({@link StoredBatch}), and the source positions the batch records ({@link
 * WriterPositions}: with aligned checkpoints, every record below {@code min(received end, lowest
 * still buffered)} of a source is in a closed file of this or an earlier batch). No Flink in it.
 *
 * <p>Cost: per report, its position changes; per batch, one write of the closed files as the
 * writers encoded them (no decoding).
 */
final class BatchAssembler {
  /** closed files of the reports since the last batch, as the writers encoded them */
  private final List<ClosedFiles> pending = new ArrayList<>();

  private final WriterPositions positions = new WriterPositions();

  /**
   * Positions continue from these received ends (a restored state's, or the table's at a start
   * without state), so they never go backwards.
   */
  void continueFrom(Map<String, Long> receivedEnds) {
    positions.continueFrom(receivedEnds);
  }

  void accept(WriterReport report) {
    if (!report.closed().isEmpty()) {
      pending.add(report.closed());
    }
    positions.apply(report);
  }

  /** Whether any file closed since the last batch. */
  boolean hasFiles() {
    return !pending.isEmpty();
  }

  /**
   * The batch of the files closed since the last one, tagged {@code checkpointId}, its files stored
   * at {@code location}; the next batch starts empty.
   */
  FileBatch assemble(long checkpointId, String lineage, FileIO io, String location)
      throws IOException {
    StoredBatch stored = StoredBatch.write(io, location, ClosedFiles.concat(pending));
    FileBatch batch = new FileBatch(checkpointId, lineage, stored, positions.positions());
    pending.clear();
    return batch;
  }

  /** Per source key, one past the highest position the writers reported received. */
  Map<String, Long> receivedEnds() {
    return positions.receivedEnds();
  }
}
