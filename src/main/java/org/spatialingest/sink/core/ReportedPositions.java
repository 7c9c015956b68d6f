package org.spatialingest.sink.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;

/**
 * What one writer instance has told the aggregator about its source positions, so that each {@link
 * WriterReport} carries only what changed since its previous one. One per writer instance (its
 * token): the first report is complete; the reports of an instance reach the aggregator in order
 * (one input channel, and a failure restarts writers and aggregator together).
 *
 * <p>Why a buffered key's {@code receivedEnds} may wait: the aggregator's position for a key is the
 * lowest position any writer still buffers, and only where no writer buffers the key the highest
 * received one. So a writer sends {@code receivedEnds} of a key when it no longer buffers it, and
 * when a file it closed holds rows of it: that file may be committed before a restore that brings
 * back only the lower rows still buffered, and the aggregator's state must then already hold the
 * higher position. A busy writer whose buffers stay open therefore reports nothing per key.
 *
 * <p>Cost: per report one pass over the writer's current keys (on the writer's own thread); the
 * report is the size of what changed, or of the complete picture when that is smaller.
 */
@Internal
public final class ReportedPositions {
  /** per key, the received end last reported */
  private final Map<String, Long> reportedEnds = new HashMap<>();

  private final Map<String, Long> buffered = new HashMap<>();
  private boolean first = true;

  /**
   * The next report of this writer instance.
   *
   * @param receivedEndsNow per key, one past the highest position received so far
   * @param bufferedNow per key, the lowest position still buffered now
   * @param closedKeys keys of rows in files closed since the previous report
   */
  public WriterReport next(
      String token,
      List<ClosedFile> closed,
      Map<String, Long> receivedEndsNow,
      Map<String, Long> bufferedNow,
      Set<String> closedKeys) {
    Map<String, Long> endsDelta = new HashMap<>();
    receivedEndsNow.forEach(
        (key, next) -> {
          if (first || closedKeys.contains(key) || !bufferedNow.containsKey(key)) {
            Long last = reportedEnds.get(key);
            if (last == null || next > last) {
              reportedEnds.put(key, next);
              endsDelta.put(key, next);
            }
          }
        });
    Map<String, Long> changed = new HashMap<>();
    bufferedNow.forEach(
        (key, lowest) -> {
          if (!lowest.equals(buffered.get(key))) {
            changed.put(key, lowest);
          }
        });
    List<String> removed = new ArrayList<>();
    for (String key : buffered.keySet()) {
      if (!bufferedNow.containsKey(key)) {
        removed.add(key);
      }
    }
    boolean complete = first || bufferedNow.size() < changed.size() + removed.size();
    first = false;
    buffered.putAll(changed);
    removed.forEach(buffered::remove);
    return complete
        ? new WriterReport(token, ClosedFiles.of(closed), endsDelta, bufferedNow, Set.of(), true)
        : new WriterReport(
            token, ClosedFiles.of(closed), endsDelta, changed, new HashSet<>(removed), false);
  }
}
