package org.spatialingest.sink.recovery;

import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.spatialingest.sink.core.SinkFileNames;

/**
 * Which staging runs a restored state may still reference, so that {@link OrphanCleaner} removes
 * every other run of this sink and never one of these.
 *
 * <p>A state references the runs of the buffers that were open at its barrier: runs its own writers
 * wrote up to that barrier, and runs those writers had restored themselves (written by earlier
 * writers, up to the barrier of the state they restored), and so on back. So the aggregator keeps,
 * in its state, a <em>horizon</em> per writer token: the highest checkpoint whose runs by that
 * writer the state may reference. A run of a writer that is not current is an orphan if its token
 * has no horizon, or if it was written at a barrier after its token's horizon.
 *
 * <p>Checkpoint ids alone (the rule before: "runs of barriers after the restored checkpoint")
 * cannot tell: if a restored job fails again after completing a checkpoint but before it removed
 * what the first failure left behind, the next restore is from a newer checkpoint, and the first
 * failure's runs, written at barriers before it, would be kept forever.
 *
 * @param restoredCheckpointId the checkpoint restored from; -1 for a start without state (every run
 *     of a writer that is not current is an orphan)
 * @param horizons token to horizon; {@code null} for a state written before horizons were kept:
 *     then every run up to the restored checkpoint is kept (the earlier rule)
 */
@Internal
public record StagingReferences(long restoredCheckpointId, Map<String, Long> horizons) {
  public StagingReferences {
    horizons = horizons == null ? null : Map.copyOf(horizons);
  }

  public boolean isOrphan(SinkFileNames.StagingName run, Set<String> currentTokens) {
    if (currentTokens.contains(run.token())) {
      return false;
    }
    if (run.checkpointId() > restoredCheckpointId) {
      return true;
    }
    if (horizons == null) {
      return false;
    }
    Long horizon = horizons.get(run.token());
    return horizon == null || run.checkpointId() > horizon;
  }
}
