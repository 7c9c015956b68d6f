package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;

/**
 * The exchange in front of the writers, on a real broker, MiniCluster and catalog: 2 source and
 * transform subtasks, 4 writers, one partition, files closed only at end of input. With {@code
 * range} each writer's file holds a compact run of Hilbert keys (so a bbox filter skips files);
 * with {@code none} every writer's file spans the whole area.
 */
class DistributionTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  private static final AtomicInteger TOPICS = new AtomicInteger();
  private static final int ROWS = 20_000;

  @Test
  void rangeDistributionGivesEachFileACompactKeyRangeAndLosesNothing(@TempDir Path dir)
      throws Exception {
    Run range = run("range", dir.resolve("range"));
    Run none = run("none", dir.resolve("none"));

    // T = 4 MB and M = 64 MB let each writer hold 4 of the 16 ranges; the 20,000 rows are well
    // under 4 MB per writer, so its close at end of input packs its ranges into one file
    assertThat(range.files)
        .as("one file per writer: its neighbouring ranges packed, not one per range")
        .hasSizeBetween(3, 4);
    assertSortedByHilbertKey(range.table, range.files);
    System.out.printf(
        "key spans / total: range %s, none %s; file bytes: range %s%n",
        range.relativeSpans(),
        none.relativeSpans(),
        range.files.stream().map(DataFile::fileSizeInBytes).toList());
    // the files' key intervals barely overlap: together they span about the keys once (the first
    // rows wait for the coordinator's boundaries, so no file holds rows placed without them);
    // without an exchange each spans them all
    assertThat(TableFiles.summedSpans(range.files))
        .as("range: sum of key spans / total span")
        .isLessThanOrEqualTo(1.25);
    assertThat(none.spansButWidest())
        .as("none: sum of key spans but the widest / total span")
        .isGreaterThanOrEqualTo(2.0);

    // a 2 x 2 degree box around one vehicle: the range table's files are skipped where the none
    // table's are not
    Expression box =
        TableFiles.bbox(
            range.anyPoint[0] - 1,
            range.anyPoint[1] - 1,
            range.anyPoint[0] + 1,
            range.anyPoint[1] + 1);
    int keptRange = TableFiles.plannedFiles(range.table, box);
    int keptNone = TableFiles.plannedFiles(none.table, box);
    assertThat(keptRange).as("files a bbox filter keeps, range vs none").isLessThan(keptNone);
    assertThat(idsIn(range.table, box)).isEqualTo(idsIn(none.table, box)).isNotEmpty();
  }

  private record Run(Table table, List<DataFile> files, double[] anyPoint) {
    List<Double> relativeSpans() {
      return files.stream().map(f -> (double) TableFiles.span(f) / totalSpan()).sorted().toList();
    }

    double spansButWidest() {
      List<Double> spans = relativeSpans();
      return spans.subList(0, spans.size() - 1).stream().mapToDouble(Double::doubleValue).sum();
    }

    long totalSpan() {
      return TableFiles.totalSpan(files);
    }
  }

  private static Run run(String mode, Path warehouse) throws Exception {
    String topic = "distribution-" + TOPICS.incrementAndGet();
    kafka.createTopic(topic, 2);
    Map<String, TelemetryGenerator.Record> sent =
        TestKit.produce(
            kafka.bootstrapServers(), topic, new TelemetryGenerator(11, 20, 0, 0), ROWS);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            warehouse,
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.target-file-size",
                "4MB",
                "sink.memory-budget",
                "64MB",
                "parallelism.sink",
                "4",
                "sink.distribution",
                mode));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("distribution-" + mode);

    Table table = TestKit.table(config);
    List<Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(sent.keySet());
    List<DataFile> files = TableFiles.files(table);
    TelemetryGenerator.Record first = sent.values().iterator().next();
    return new Run(table, files, new double[] {first.x(), first.y()});
  }

  /** Each packed file holds its ranges' rows merged into one Hilbert order. */
  private static void assertSortedByHilbertKey(Table table, List<DataFile> files)
      throws IOException {
    for (DataFile f : files) {
      long previous = Long.MIN_VALUE;
      long rows = 0;
      try (CloseableIterable<Record> records = TestKit.fileRows(table, f)) {
        for (Record r : records) {
          long key = (Long) r.getField("hilbert");
          assertThat(key)
              .as("hilbert key of row %d of %s", rows, f.location())
              .isGreaterThanOrEqualTo(previous);
          previous = key;
          rows++;
        }
      }
      assertThat(rows).isEqualTo(f.recordCount());
    }
  }

  private static Set<String> idsIn(Table table, Expression filter) throws Exception {
    Set<String> ids = new HashSet<>();
    try (CloseableIterable<Record> it = IcebergGenerics.read(table).where(filter).build()) {
      for (Record r : it) {
        ids.add((String) r.getField("id"));
      }
    }
    return ids;
  }
}
