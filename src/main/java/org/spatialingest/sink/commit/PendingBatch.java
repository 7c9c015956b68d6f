package org.spatialingest.sink.commit;

import java.util.List;

/**
 * What the aggregator remembers of a batch the committer may still commit after a restore, so that
 * orphan clean-up keeps its files: where its closed files are stored (the current form: one
 * location, whatever the batch's size), or, for a batch remembered by an earlier build's state, its
 * data file locations.
 *
 * @param stored the batch's {@link StoredBatch} location; {@code null} for an earlier build's
 * @param dataFiles the data file locations of an earlier build's batch; empty if stored
 */
record PendingBatch(String stored, List<String> dataFiles) {
  PendingBatch {
    dataFiles = List.copyOf(dataFiles);
  }

  static PendingBatch stored(String location) {
    return new PendingBatch(location, List.of());
  }

  static PendingBatch ofDataFiles(List<String> dataFiles) {
    return new PendingBatch(null, dataFiles);
  }
}
