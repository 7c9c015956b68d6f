package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TablePositions;

/**
 * Generated input for exactly-once tests: points of today, every {@code oldEvery}-th of three days
 * ago (another time partition), every {@code badEvery}-th a record that must be rejected; with the
 * ids expected in the table and the raw values expected in the rejects table.
 */
public record MixedInput(List<byte[]> values, Set<String> rows, Set<String> rejects) {
  private static final long NOW = System.currentTimeMillis();
  private static final long THREE_DAYS_AGO = NOW - 3 * 86_400_000L;

  static MixedInput of(int count, int oldEvery, int badEvery) {
    return of("r", count, oldEvery, badEvery);
  }

  public static MixedInput of(String idPrefix, int count, int oldEvery, int badEvery) {
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

  public MixedInput plus(MixedInput other) {
    List<byte[]> v = new ArrayList<>(values);
    v.addAll(other.values);
    Set<String> r = new HashSet<>(rows);
    r.addAll(other.rows);
    Set<String> j = new HashSet<>(rejects);
    j.addAll(other.rejects);
    return new MixedInput(v, r, j);
  }

  /**
   * Asserts that the telemetry table holds every row id once, the rejects table every rejected raw
   * value once, the positions are Kafka or file keys, and no file is orphaned.
   */
  public void assertExactlyOnceIn(JobConfig config) throws Exception {
    Table table = TestKit.table(config);
    List<Record> committed = TestKit.rows(table);
    assertThat(TestKit.distinctIds(committed)).as("every row once").isEqualTo(rows());
    assertThat(committed).hasSize(rows().size());
    Table rejects =
        Catalogs.catalogLoader(config)
            .loadCatalog()
            .loadTable(Catalogs.rejectsTableIdentifier(config));
    List<Record> rejected = TestKit.rows(rejects);
    Set<String> raw = new HashSet<>();
    for (Record r : rejected) {
      raw.add(new String(TestKit.bytes(r.getField("raw")), StandardCharsets.UTF_8));
    }
    assertThat(rejected).as("every reject once").hasSize(rejects().size());
    assertThat(raw).isEqualTo(rejects());
    assertThat(TablePositions.read(table).keySet())
        .allSatisfy(
            key ->
                assertThat(key)
                    .satisfiesAnyOf(
                        k -> assertThat(SourceKeys.isFile(k)).isTrue(),
                        k -> assertThat(k).contains("/")));
    TestKit.assertNoOrphans(table);
  }
}
