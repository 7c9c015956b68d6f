package org.spatialingest.sink.write;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryStringData;

/**
 * One long per source key, kept as the lowest or the highest value seen: a partition buffer's
 * lowest buffered source position, or a writer's highest received one. One map lookup per row, on
 * the key's bytes (no string decoding).
 */
final class SourceMarks {
  private final boolean lowest;
  private final Map<StringData, long[]> marks = new HashMap<>();

  private SourceMarks(boolean lowest) {
    this.lowest = lowest;
  }

  static SourceMarks lowest() {
    return new SourceMarks(true);
  }

  static SourceMarks highest() {
    return new SourceMarks(false);
  }

  void mark(StringData key, long value) {
    long[] mark = marks.get(key);
    if (mark == null) {
      // the key may be a view into a reused row: keep a copy
      marks.put(key instanceof BinaryStringData b ? b.copy() : key, new long[] {value});
    } else if (lowest ? value < mark[0] : value > mark[0]) {
      mark[0] = value;
    }
  }

  boolean isEmpty() {
    return marks.isEmpty();
  }

  /** Adds every key to {@code into}. */
  void keysInto(Set<String> into) {
    marks.keySet().forEach(key -> into.add(key.toString()));
  }

  /**
   * Adds each key's value (+ {@code plus}) into {@code into}, keeping the lowest (or highest) per
   * key.
   */
  void mergeInto(Map<String, Long> into, long plus) {
    marks.forEach(
        (key, mark) -> into.merge(key.toString(), mark[0] + plus, lowest ? Math::min : Math::max));
  }
}
