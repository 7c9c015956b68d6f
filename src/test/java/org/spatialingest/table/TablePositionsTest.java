package org.spatialingest.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.HashMap;
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
    TablePositions.summary(positions).forEach(append::set);
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
        "positions of 10,000 files + 1,000 partitions: format 1 %,d bytes, format 2 %,d bytes;"
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
        .set(SnapshotSummaryKeys.POSITIONS_FORMAT, "3")
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

  private static Table newTable(JobConfig config) {
    return TableBootstrap.ensureTable(
        Catalogs.catalogLoader(config).loadCatalog(),
        Catalogs.tableIdentifier(config),
        TelemetryTable.LAYOUT,
        config.partitioning());
  }
}
