package org.spatialingest.sink.write;

import java.util.HashMap;
import java.util.Map;

/**
 * How many rows were ingested in each second: a compact, mergeable record of a batch's ingest
 * times, so the committer can report the age of every row at commit (a histogram), not only of the
 * oldest and newest.
 *
 * <p>Rows arrive mostly in ingest order, so the current second is counted in a plain field and only
 * folded into the map when the second changes: no boxing or map lookup per row on the writer's hot
 * path.
 */
final class IngestTimeCounts {
  private final Map<Long, Long> countsBySecond = new HashMap<>();
  private long currentSecond = Long.MIN_VALUE;
  private long currentCount;

  void add(long ingestMillis) {
    long second = Math.floorDiv(ingestMillis, 1000L);
    if (second != currentSecond) {
      fold();
      currentSecond = second;
    }
    currentCount++;
  }

  void addAll(Map<Long, Long> other) {
    other.forEach((second, n) -> countsBySecond.merge(second, n, Long::sum));
  }

  Map<Long, Long> toMap() {
    fold();
    return new HashMap<>(countsBySecond);
  }

  private void fold() {
    if (currentCount > 0) {
      countsBySecond.merge(currentSecond, currentCount, Long::sum);
      currentCount = 0;
    }
  }
}
