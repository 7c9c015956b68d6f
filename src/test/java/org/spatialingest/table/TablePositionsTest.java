package org.spatialingest.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * The positions format ({@link TablePositions}) at scale, committed to a real catalog's table the
 * way the committer does: a backfill of 10,000 files and a topic of 1,000 partitions keep the
 * snapshot summary under 64 KB. (Resuming exactly from either format: {@code
 * ResumeWithoutStateTest}.)
 */
class TablePositionsTest {
  private static final int SUMMARY_LIMIT = 64 * 1024;

  /** The committer's summary entries for 10,000 file sources and 1,000 partitions, committed. */
  @Test
  void tenThousandFilesAndAThousandPartitionsKeepTheSummaryUnder64KB(@TempDir Path dir)
      throws Exception {
    Map<String, Long> positions = new HashMap<>();
    for (int i = 0; i < 10_000; i++) {
      positions.put(
          SourceKeys.file("/data/backfill/2026/12/01/part-" + i + "-" + UUID.randomUUID() + ".nd"),
          21L);
    }
    Map<String, Long> kafkaPositions = new HashMap<>();
    for (int p = 0; p < 1_000; p++) {
      kafkaPositions.put(SourceKeys.kafka("vehicle-telemetry", p), 9_000_000_000L + 7_919L * p);
    }
    positions.putAll(kafkaPositions);
    JobConfig config = TestKit.config("localhost:1", "unused", dir, Map.of());
    Table table = newTable(config);
    var append = table.newFastAppend();
    TablePositions.summary(
            "it-unused",
            new KafkaIds("cluster-a", Map.of("vehicle-telemetry", "topic-a")),
            positions)
        .forEach(append::set);
    append.commit();
    table.refresh();

    Map<String, String> summary = table.currentSnapshot().summary();
    long summaryBytes =
        summary.entrySet().stream()
            .mapToLong(e -> e.getKey().length() + e.getValue().length())
            .sum();
    long metadataBytes =
        table
            .io()
            .newInputFile(
                ((HasTableOperations) table).operations().current().metadataFileLocation())
            .getLength();
    long formatOneBytes = new ObjectMapper().writeValueAsString(new TreeMap<>(positions)).length();
    System.out.printf(
        "positions of 10,000 files + 1,000 partitions: format 1 %,d bytes, format 3 %,d bytes;"
            + " whole summary %,d bytes, metadata.json %,d bytes%n",
        formatOneBytes,
        summary.get(SnapshotSummaryKeys.POSITIONS).length(),
        summaryBytes,
        metadataBytes);
    assertThat(summaryBytes).isLessThanOrEqualTo(SUMMARY_LIMIT);
    assertThat(summary)
        .containsEntry(
            SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(TablePositions.FORMAT));
    assertThat(TablePositions.read(table)).isEqualTo(kafkaPositions);
  }

  /** A format this release does not know is refused, never guessed at. */
  @Test
  void aNewerFormatIsRefused(@TempDir Path dir) {
    Table table = newTable(TestKit.config("localhost:1", "unused", dir, Map.of()));
    table
        .newFastAppend()
        .set(SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(TablePositions.FORMAT + 1))
        .set(SnapshotSummaryKeys.POSITIONS, "{}")
        .commit();
    table.refresh();
    assertThatThrownBy(() -> TablePositions.read(table))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(SnapshotSummaryKeys.POSITIONS_FORMAT);
  }

  /** Line ranges: any order in, exact membership out, a contiguous file is one range. */
  @Test
  void lineRangesAreExact() {
    PositionRanges lines = new PositionRanges();
    for (long line = 5_000; line >= 1; line--) {
      if (line != 17 && line != 4_000) {
        lines.add(line);
      }
    }
    lines.add(3);
    lines.done();
    assertThat(lines.rangeCount()).isEqualTo(3);
    assertThat(lines.count()).isEqualTo(4_998);
    assertThat(lines.contains(0)).isFalse();
    assertThat(lines.contains(1)).isTrue();
    assertThat(lines.contains(17)).isFalse();
    assertThat(lines.contains(18)).isTrue();
    assertThat(lines.contains(4_000)).isFalse();
    assertThat(lines.contains(5_000)).isTrue();
    assertThat(lines.contains(5_001)).isFalse();
  }

  /** Lines of one file under two paths (it moved): counted once where both hold them. */
  @Test
  void lineRangesOfTwoPathsCountTheirUnionWithinBounds() {
    PositionRanges before = new PositionRanges();
    PositionRanges after = new PositionRanges();
    for (long line = 1; line <= 100; line++) {
      if (line <= 60) {
        before.add(line);
      }
      if (line >= 40 && line != 70) {
        after.add(line);
      }
    }
    before.done();
    after.done();
    List<PositionRanges> both = List.of(after, before);
    assertThat(PositionRanges.countIn(both, 1, 101)).isEqualTo(99);
    assertThat(PositionRanges.countIn(both, 1, 51)).isEqualTo(50);
    assertThat(PositionRanges.countIn(both, 65, 75)).isEqualTo(9);
    assertThat(PositionRanges.countIn(List.of(before), 1, 1_000)).isEqualTo(60);
  }

  /**
   * Format 3: each commit records its own sink's positions with their ids; another sink's commits
   * on top neither hide nor overwrite them; format 2 reads as any sink's with unknown ids.
   */
  @Test
  void eachSinkReadsItsOwnPositionsAndFormatTwoIsAnySinks(@TempDir Path dir) {
    Table table = newTable(TestKit.config("localhost:1", "unused", dir, Map.of()));
    table
        .newFastAppend()
        .set(SnapshotSummaryKeys.POSITIONS_FORMAT, "2")
        .set(SnapshotSummaryKeys.POSITIONS, "{\"kafka\":{\"ta\":[7,-1,9]},\"file-sources\":0}")
        .commit();
    table.refresh();
    SinkPositions old = TablePositions.readSink(table, "a").orElseThrow();
    assertThat(old.sinkId()).isNull();
    assertThat(old.knowsCluster()).isFalse();
    assertThat(old.offsets()).isEqualTo(Map.of("ta/0", 7L, "ta/2", 9L));

    KafkaIds idsA = new KafkaIds("c1", Map.of("ta", "id-ta"));
    commit(table, "a", idsA, Map.of("ta/0", 10L));
    commit(table, "b", new KafkaIds("c1", Map.of("tb", "id-tb")), Map.of("tb/0", 3L));
    SinkPositions a = TablePositions.readSink(table, "a").orElseThrow();
    assertThat(a.offsets()).isEqualTo(Map.of("ta/0", 10L));
    assertThat(a.ids()).isEqualTo(idsA);
    assertThat(TablePositions.readSink(table, "b").orElseThrow().offsets())
        .isEqualTo(Map.of("tb/0", 3L));
    assertThat(a.applicableTo(new KafkaIds("c1", Map.of("ta", "id-ta")))).containsKey("ta/0");
    assertThat(a.applicableTo(new KafkaIds("c1", Map.of("ta", "id-new")))).isEmpty();
    assertThat(a.otherCluster(new KafkaIds("c2", Map.of("ta", "id-ta")))).isTrue();
    assertThat(a.applicableTo(new KafkaIds("c2", Map.of("ta", "id-ta")))).isEmpty();
  }

  /**
   * Another writer's commits and {@code expireSnapshots} (retain last 1) break the history; the
   * sink's tag keeps its newest positions reachable. A rollback is told from expiry.
   */
  @Test
  void theTagKeepsPositionsThroughExpiryAndARollbackIsSeen(@TempDir Path dir) {
    Table table = newTable(TestKit.config("localhost:1", "unused", dir, Map.of()));
    KafkaIds ids = new KafkaIds("c1", Map.of("ta", "id-ta"));
    long first = commit(table, "a", ids, Map.of("ta/0", 5L));
    long second = commit(table, "a", ids, Map.of("ta/0", 8L));
    assertThat(TablePositions.isInHistory(table, second)).isTrue();
    for (int i = 0; i < 3; i++) {
      table.newFastAppend().set("other-writer", Integer.toString(i)).commit();
    }
    table.expireSnapshots().retainLast(1).expireOlderThan(Long.MAX_VALUE).commit();
    table.refresh();
    assertThat(table.snapshot(first)).as("expired").isNull();
    assertThat(table.snapshot(second)).as("kept by the tag").isNotNull();
    assertThat(TablePositions.readAsOf(table, table.currentSnapshot()))
        .as("the history alone has lost them")
        .isEmpty();
    assertThat(TablePositions.readSink(table, "a").orElseThrow().offsets())
        .isEqualTo(Map.of("ta/0", 8L));
    assertThat(TablePositions.isInHistory(table, second)).isTrue();

    Table other = newTable(TestKit.config("localhost:1", "unused2", dir.resolve("b"), Map.of()));
    long b1 = commit(other, "a", ids, Map.of("ta/0", 1L));
    long b2 = commit(other, "a", ids, Map.of("ta/0", 2L));
    other.manageSnapshots().rollbackTo(b1).commit();
    other.newFastAppend().set("other-writer", "after-rollback").commit();
    other.refresh();
    assertThat(TablePositions.isInHistory(other, b2)).isFalse();
    assertThat(TablePositions.readSink(other, "a").orElseThrow().offsets())
        .as("positions as of the rolled-back table")
        .isEqualTo(Map.of("ta/0", 1L));
  }

  /** Commits an empty snapshot with positions of sink {@code sinkId} and moves its tag. */
  private static long commit(
      Table table, String sinkId, KafkaIds ids, Map<String, Long> positions) {
    table.refresh();
    var tx = table.newTransaction();
    var append = tx.newFastAppend();
    TablePositions.summary(sinkId, ids, positions).forEach(append::set);
    append.commit();
    TablePositions.moveTag(tx, sinkId);
    tx.commitTransaction();
    table.refresh();
    return table.refs().get(TablePositions.tagName(sinkId)).snapshotId();
  }

  private static Table newTable(JobConfig config) {
    return TestKit.newTable(config);
  }
}
