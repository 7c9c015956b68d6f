package org.spatialingest.sink;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Generated input for exactly-once tests: points of today, every {@code oldEvery}-th of three days
 * ago (another time partition), every {@code badEvery}-th a record that must be rejected; with the
 * ids expected in the table and the raw values expected in the rejects table.
 */
record MixedInput(List<byte[]> values, Set<String> rows, Set<String> rejects) {
  private static final long NOW = System.currentTimeMillis();
  private static final long THREE_DAYS_AGO = NOW - 3 * 86_400_000L;

  static MixedInput of(int count, int oldEvery, int badEvery) {
    return of("r", count, oldEvery, badEvery);
  }

  static MixedInput of(String idPrefix, int count, int oldEvery, int badEvery) {
    List<byte[]> values = new ArrayList<>();
    Set<String> rows = new HashSet<>();
    Set<String> rejects = new HashSet<>();
    for (int i = 0; i < count; i++) {
      String value;
      if (badEvery > 0 && i % badEvery == badEvery - 1) {
        value =
            "{\"id\":\""
                + idPrefix
                + "bad-"
                + i
                + "\",\"event_time\":"
                + NOW
                + ",\"geometry\":{\"type\":\"Point\"}}";
        rejects.add(value);
      } else {
        long time = oldEvery > 0 && i % oldEvery == 0 ? THREE_DAYS_AGO + i : NOW + i;
        value =
            String.format(
                Locale.ROOT,
                "{\"id\":\"%s%d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\","
                    + "\"coordinates\":[%.5f,%.5f]},\"properties\":{\"pad\":\"%s\"}}",
                idPrefix,
                i,
                time,
                (i * 7.3) % 360 - 180,
                (i * 3.1) % 180 - 90,
                "x".repeat(60));
        rows.add(idPrefix + i);
      }
      values.add(value.getBytes(StandardCharsets.UTF_8));
    }
    return new MixedInput(values, rows, rejects);
  }

  MixedInput plus(MixedInput other) {
    List<byte[]> v = new ArrayList<>(values);
    v.addAll(other.values);
    Set<String> r = new HashSet<>(rows);
    r.addAll(other.rows);
    Set<String> j = new HashSet<>(rejects);
    j.addAll(other.rejects);
    return new MixedInput(v, r, j);
  }
}
