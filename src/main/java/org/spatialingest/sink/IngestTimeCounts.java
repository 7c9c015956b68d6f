package org.spatialingest.sink;

import java.util.HashMap;
import java.util.Map;

/**
 * How many rows were ingested in each second: a compact, mergeable record of a batch's ingest times, so the committer
 * can report the age of every row at commit (a histogram), not only of the oldest and newest.
 */
final class IngestTimeCounts {
  private final Map<Long, long[]> countsBySecond = new HashMap<>();

  void add(long ingestMillis) {
    countsBySecond.computeIfAbsent(Math.floorDiv(ingestMillis, 1000L), s -> new long[1])[0]++;
  }

  void addAll(Map<Long, Long> other) {
    other.forEach((second, n) -> countsBySecond.computeIfAbsent(second, s -> new long[1])[0] += n);
  }

  Map<Long, Long> toMap() {
    Map<Long, Long> out = new HashMap<>();
    countsBySecond.forEach((second, n) -> out.put(second, n[0]));
    return out;
  }
}
