package org.spatialingest.sink;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
record StagingReferences(long restoredCheckpointId, Map<String, Long> horizons) {
  /** Marks a state that carries horizons (possibly none). */
  private static final String MARKER = "#horizons-v1";

  StagingReferences {
    horizons = horizons == null ? null : Map.copyOf(horizons);
  }

  boolean isOrphan(SinkFileNames.StagingName run, Set<String> currentTokens) {
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

  /** The state entries for {@code horizons}. */
  static List<String> encode(Map<String, Long> horizons) {
    List<String> entries = new ArrayList<>(horizons.size() + 1);
    entries.add(MARKER);
    horizons.forEach((token, id) -> entries.add(token + "=" + id));
    return entries;
  }

  /** The horizons in state entries, or {@code null} if the entries are not {@link #encode}'s. */
  static Map<String, Long> decode(Iterable<String> entries) {
    Map<String, Long> horizons = new HashMap<>();
    boolean marked = false;
    for (String e : entries) {
      if (e.equals(MARKER)) {
        marked = true;
      } else {
        int eq = e.lastIndexOf('=');
        horizons.merge(e.substring(0, eq), Long.parseLong(e.substring(eq + 1)), Math::max);
      }
    }
    return marked ? horizons : null;
  }
}
