package org.spatialingest.sink.commit;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.spatialingest.sink.core.WriterReport;

/**
 * The aggregator's view of the writers' source positions, built from their {@link WriterReport}s as
 * changes: per writer token the lowest position it still buffers per key, the lowest of those per
 * key, and per key the received end: one past the highest position reported received.
 *
 * <p>A batch's position for a key is the lowest position any writer still buffers, and the highest
 * received end where no writer buffers the key (every row below it is in a closed file of this or
 * an earlier batch). While some writer buffers a key its lowest bounds the position, so writers may
 * hold back a buffered key's received end ({@code ReportedPositions}).
 *
 * <p>Cost: applying a report is proportional to the entries it carries; the lowest per key is kept
 * as reports arrive, and only a key whose lowest writer moved up or left is looked up again in
 * every writer's map, once, at the next batch. Memory: one entry per writer and key it buffers
 * (keys shared, not copied per writer), and one per key. Not in state: a restore starts every
 * writer again with a new token and a complete report. A token that stops reporting (a finished
 * writer, which closed everything) keeps its last map until the aggregator restarts.
 */
final class WriterPositions {
  private final Map<String, Long> receivedEnds = new HashMap<>();
  private final Map<String, Map<String, Long>> bufferedByWriter = new HashMap<>();
  private final Map<String, Long> lowest = new HashMap<>();

  /** keys whose lowest writer moved up or stopped buffering: {@link #lowest} is recomputed */
  private final Set<String> stale = new HashSet<>();

  /** one instance per source key, shared by every writer's map */
  private final Map<String, String> keys = new HashMap<>();

  /**
   * Continues from received ends of before (restored state, or the table's positions, which are
   * ends too: one past the last committed record).
   */
  void continueFrom(Map<String, Long> receivedEnds) {
    receivedEnds.forEach((key, end) -> this.receivedEnds.merge(key(key), end, Math::max));
  }

  /** per source key, one past the highest position reported received (the aggregator's state) */
  Map<String, Long> receivedEnds() {
    return receivedEnds;
  }

  /**
   * Applies a writer's report.
   *
   * @throws IllegalStateException for a report of changes from a writer token without an earlier
   *     complete report (reports lost or reordered; they cannot be with aligned checkpoints)
   */
  void apply(WriterReport report) {
    Map<String, Long> picture = bufferedByWriter.get(report.writerToken());
    if (picture == null) {
      if (!report.complete()) {
        throw new IllegalStateException(
            "Writer "
                + report.writerToken()
                + " reported position changes before a complete report; the sink needs aligned"
                + " checkpoints and every report of a writer in order");
      }
      picture = new HashMap<>();
      bufferedByWriter.put(report.writerToken(), picture);
    }
    report.receivedEnds().forEach((key, end) -> receivedEnds.merge(key(key), end, Math::max));
    if (report.complete()) {
      for (Iterator<Map.Entry<String, Long>> it = picture.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, Long> e = it.next();
        if (!report.buffered().containsKey(e.getKey())) {
          it.remove();
          changed(e.getKey(), e.getValue(), null);
        }
      }
    } else {
      for (String key : report.unbuffered()) {
        Long old = picture.remove(key);
        if (old != null) {
          changed(key, old, null);
        }
      }
    }
    for (Map.Entry<String, Long> e : report.buffered().entrySet()) {
      String key = key(e.getKey());
      Long now = e.getValue();
      changed(key, picture.put(key, now), now);
    }
  }

  private void changed(String key, Long old, Long now) {
    if (stale.contains(key) || (old != null && old.equals(now))) {
      return;
    }
    Long low = lowest.get(key);
    if (now != null && (low == null || now < low)) {
      lowest.put(key, now);
    } else if (old != null && old.equals(low)) {
      stale.add(key); // the lowest writer moved up or left; another may hold the same or more
    }
  }

  /** Source positions below which every row is in a closed file reported so far. */
  Map<String, Long> positions() {
    for (String key : stale) {
      long min = Long.MAX_VALUE;
      for (Map<String, Long> picture : bufferedByWriter.values()) {
        Long value = picture.get(key);
        if (value != null && value < min) {
          min = value;
        }
      }
      if (min == Long.MAX_VALUE) {
        lowest.remove(key);
      } else {
        lowest.put(key, min);
      }
    }
    stale.clear();
    Map<String, Long> positions = new HashMap<>(receivedEnds);
    positions.putAll(lowest);
    return positions;
  }

  private String key(String key) {
    String shared = keys.putIfAbsent(key, key);
    return shared == null ? key : shared;
  }
}
