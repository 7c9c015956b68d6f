package org.spatialingest.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;

/**
 * The one rule for how far back the sink trusts a table's history ({@link SinkHistory}), on a real
 * Hadoop table whose snapshots are expired as table maintenance does.
 */
class SinkHistoryTest {

  @Test
  void aWindowStopsAtItsHorizonAndTellsExpiryFromTheFirstSnapshot(@TempDir Path dir)
      throws Exception {
    Table table = TestKit.newTable(TestKit.config("localhost:1", "unused", dir, Map.of()));
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      table.newFastAppend().set(SnapshotSummaryKeys.BATCH_ID, "b" + i).commit();
      table.refresh();
      times.add(table.currentSnapshot().timestampMillis());
      Thread.sleep(3);
    }

    // a whole history ends at the first snapshot: nothing may have expired
    SinkHistory.Window whole = SinkHistory.whole(table);
    assertThat(ids(whole)).containsExactly("b4", "b3", "b2", "b1", "b0");
    assertThat(whole.cutByExpiry()).isFalse();
    assertThat(whole.mayHaveExpired(Long.MIN_VALUE)).isFalse();

    // a horizon inside the history: the walk stops before the first older snapshot; a snapshot at
    // the horizon is inside, one a millisecond older is not
    SinkHistory.Window recent = SinkHistory.downTo(table, times.get(3));
    assertThat(ids(recent)).containsExactly("b4", "b3");
    assertThat(recent.cutByExpiry()).isFalse();
    assertThat(ids(SinkHistory.downTo(table, times.get(3) + 1))).containsExactly("b4");
    assertThat(SinkHistory.horizon(Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE); // no wrap-around

    // since(t) reaches SLACK before t: every snapshot of the last seconds
    assertThat(ids(SinkHistory.since(table, times.get(4)))).hasSize(5);
    assertThat(SinkHistory.horizon(times.get(4)))
        .isEqualTo(times.get(4) - SinkHistory.SLACK.toMillis());

    table.expireSnapshots().expireOlderThan(times.get(3)).retainLast(1).commit();
    table.refresh();
    SinkHistory.Window cut = SinkHistory.whole(table);
    assertThat(ids(cut)).containsExactly("b4", "b3");
    assertThat(cut.cutByExpiry()).isTrue();
    assertThat(cut.oldest().timestampMillis()).isEqualTo(times.get(3));
    // something made at or before the oldest snapshot left may have been committed in an expired
    // one; something made after it may not
    assertThat(cut.mayHaveExpired(times.get(3))).isTrue();
    assertThat(cut.mayHaveExpired(times.get(1))).isTrue();
    assertThat(cut.mayHaveExpired(times.get(3) + 1)).isFalse();

    // a walk that stops at its horizon before the expired part is whole
    SinkHistory.Window above = SinkHistory.downTo(table, times.get(4));
    assertThat(ids(above)).containsExactly("b4");
    assertThat(above.cutByExpiry()).isFalse();

    // the newest commit of the sink, any lineage
    assertThat(SinkHistory.lastSinkCommitMillis(table, "any")).isEqualTo(times.get(4));
  }

  private static List<String> ids(SinkHistory.Window window) {
    List<String> ids = new ArrayList<>();
    for (Snapshot s : window) {
      ids.add(s.summary().get(SnapshotSummaryKeys.BATCH_ID));
    }
    return ids;
  }
}
