package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.BoundedInputSample;

/**
 * A bounded file input starts from the key ranges of a sample of all of it ({@link
 * StartingStatistics}), on a real MiniCluster, files and catalog: a backfill whose files each hold
 * one area, read one after another, so its first second (what an early merge would cut) is one area
 * only.
 */
class StartingRangesTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  private static final int ROWS_PER_AREA = 1_500;

  /** One area per writer. */
  private static final int AREAS = 4;

  private static final long DAY_MILLIS = 86_400_000L;

  /** 2026-11-01T00:00:00Z */
  private static final long START_MILLIS = 1_793_491_200_000L;

  /**
   * One file per area (4 of {@link KeyedAreas#CENTRES}, each one run of keys), over two days, at 4
   * writers. Cut from the keys an early merge sees (the first 2,048 rows: one file and part of the
   * next), the writers' blocks lie inside those areas and the others fall into the outer blocks;
   * cut from the whole input, each block holds one whole area. So in the first commit no area of a
   * partition may be on two writers.
   */
  @Test
  void aBackfillOfOneAreaPerFilePlacesItsFirstRowsByTheWholeInput(@TempDir Path dir)
      throws Exception {
    Path input = Files.createDirectories(dir.resolve("input"));
    int rows = writeOneAreaPerFile(input);
    JobConfig config = config(dir, input, 4);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1); // one reader and one placement subtask: the files one after another
    SpatialIngestJob.build(env, config, true);
    env.execute("starting-ranges");

    Table table = TestKit.table(config);
    assertThat(TableFiles.files(table).stream().mapToLong(DataFile::recordCount).sum())
        .isEqualTo(rows);
    Snapshot first = null;
    for (Snapshot s : table.snapshots()) {
      if (s.addedDataFiles(table.io()).iterator().hasNext()) {
        first = s;
        break;
      }
    }
    assertThat(first).as("a commit with files").isNotNull();
    Map<String, Set<Integer>> writers = new TreeMap<>(); // "<partition> area <a>" -> writers
    for (DataFile f : first.addedDataFiles(table.io())) {
      String name = f.location().substring(f.location().lastIndexOf('/') + 1);
      int writer = Integer.parseInt(name.substring(0, name.indexOf('-')));
      String partition = table.specs().get(f.specId()).partitionToPath(f.partition());
      try (CloseableIterable<Record> fileRows = TestKit.fileRows(table, f)) {
        for (Record r : fileRows) {
          String id = (String) r.getField("id");
          String area = id.substring(1, id.indexOf('-'));
          writers.computeIfAbsent(partition + " area " + area, k -> new TreeSet<>()).add(writer);
        }
      }
    }
    List<String> split = new ArrayList<>();
    writers.forEach(
        (area, on) -> {
          System.out.printf(Locale.ROOT, "first commit: %s on writers %s%n", area, on);
          if (on.size() > 1) {
            split.add(area + " on writers " + on);
          }
        });
    assertThat(split).as("areas of the first commit on more than one writer").isEmpty();
  }

  @Test
  void anInputWhoseSampleCannotBeReadOrParsedStartsAsBefore(@TempDir Path dir) throws Exception {
    Path input = Files.createDirectories(dir.resolve("input"));
    Files.writeString(input.resolve("bad.json"), "not json\n{\"id\":\"x\"}\n");
    JobConfig rejected = config(dir, input, 2);
    assertThat(BoundedInputSample.read(rejected)).isEmpty();
    JobConfig missing = config(dir, dir.resolve("missing"), 2);
    assertThat(BoundedInputSample.read(missing)).isEmpty();
    // the job still builds: its first rows wait for the early merge, as on Kafka
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    SpatialIngestJob.build(env, rejected, true);
    assertThat(env.getStreamGraph(false).getStreamNodes()).isNotEmpty();

    writeOneAreaPerFile(input);
    BoundedInputSample.Rows sample = BoundedInputSample.read(rejected).orElseThrow();
    assertThat(sample.rows())
        .as("4,096 records, the 2 bad ones perhaps among them")
        .hasSizeBetween(4_094, 4_096);
    assertThat(sample.rowsPerSampledRow())
        .as("input records per sampled one")
        .isEqualTo((AREAS * ROWS_PER_AREA + 2) / 4_096.0);
  }

  private static JobConfig config(Path dir, Path input, int writers) {
    return GlobalRangesTest.backfillConfig(
        "localhost:9092", input, dir.resolve("warehouse"), writers);
  }

  /** Writes {@code area-<a>.json} for each area: points in it over two days, shuffled. */
  private static int writeOneAreaPerFile(Path dir) throws Exception {
    Random random = new Random(28);
    int rows = 0;
    for (int a = 0; a < AREAS; a++) {
      double[] centre = KeyedAreas.CENTRES[a];
      List<String> lines = new ArrayList<>();
      for (int i = 0; i < ROWS_PER_AREA; i++) {
        lines.add(
            KeyedAreas.point(
                "a" + a + "-" + i,
                START_MILLIS + (long) (random.nextDouble() * 2 * DAY_MILLIS),
                centre[0] + (random.nextDouble() - 0.5) * 6,
                centre[1] + (random.nextDouble() - 0.5) * 6,
                "v" + a));
      }
      Collections.shuffle(lines, random);
      Files.write(
          dir.resolve("area-" + a + ".json"),
          String.join("\n", lines).concat("\n").getBytes(StandardCharsets.UTF_8));
      rows += lines.size();
    }
    return rows;
  }
}
