package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * A backfill in id order over 45 day partitions, far more than {@code sink.max-open-partitions}
 * (8): the buffers past the limit are parked (rows to their staging runs, memory released) and
 * reopen later, so every partition still gets files of T, not one file per run of rows; through a
 * failure while buffers are parked every row is committed once.
 */
class ParkedBackfillTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  // 45 days: each writer's ~22 partitions are still almost 3 times the open limit, and every
  // partition still gets ~3 files of T; 90 days proved nothing more in twice the time
  static final int DAYS = 45;
  static final int DEVICES = 6;
  static final int ROWS_PER_DEVICE_DAY = 25;
  static final long TARGET = 32 * 1024;

  /**
   * Commits of the running test's job so far; its source's pacing reads it (the mini cluster runs
   * in this JVM).
   */
  static final AtomicInteger COMMITS = new AtomicInteger();

  @AfterEach
  void removeFaults() {
    SinkFaults.install(null);
    COMMITS.set(0);
  }

  @Test
  void aBackfillInIdOrderWritesFilesOfTInEveryPartition(@TempDir Path tmp) throws Exception {
    Set<String> ids = writeBackfill(tmp.resolve("input"));
    AtomicInteger parks = new AtomicInteger();
    SinkFaults.install(
        p -> {
          if (p == SinkFaults.Point.AFTER_PARKING) {
            parks.incrementAndGet();
          }
        });
    JobConfig config = config(tmp);
    run(config, Duration.ZERO, Duration.ZERO);

    Table table = assertEveryRowOnce(config, ids);
    assertCompact(table);
    assertThat(parks.get()).as("buffers were parked").isGreaterThan(DAYS);
  }

  @Test
  void aRestoreWhileBuffersAreParkedCommitsEveryRowOnce(@TempDir Path tmp) throws Exception {
    Set<String> ids = writeBackfill(tmp.resolve("input"));
    AtomicInteger commits = COMMITS;
    AtomicInteger parks = new AtomicInteger();
    AtomicBoolean failed = new AtomicBoolean();
    AtomicBoolean restoredParked = new AtomicBoolean();
    SinkFaults.install(
        p -> {
          switch (p) {
            case BEFORE_COMMIT -> commits.incrementAndGet();
            case RESTORED_PARKED -> restoredParked.set(true);
            case AFTER_PARKING -> {
              // once checkpoints with parked buffers have completed and been committed
              if (parks.incrementAndGet() > 100
                  && commits.get() >= 1
                  && failed.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure while buffers are parked");
              }
            }
            default -> {}
          }
        });
    JobConfig config = config(tmp);
    // read over several checkpoints: unpaced, a fast machine reads the whole input before the
    // first commit, and no buffer is parked after it; until the first commit 5 ms per record, so
    // a machine slow to checkpoint still commits long before the input ends (6,750 records)
    run(config, Duration.ofMillis(1), Duration.ofMillis(5));

    assertThat(failed).as("the failure was injected").isTrue();
    assertThat(restoredParked).as("the restored state held parked buffers").isTrue();
    assertCompact(assertEveryRowOnce(config, ids));
  }

  /**
   * Every device sends DAYS days of rows in time order, devices one after another: each device
   * cycles through all DAYS partitions.
   */
  static Set<String> writeBackfill(Path dir) throws Exception {
    Files.createDirectories(dir);
    Random random = new Random(38);
    long day0 = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
    StringBuilder sb = new StringBuilder();
    Set<String> ids = new HashSet<>();
    byte[] payload = new byte[300];
    for (int device = 0; device < DEVICES; device++) {
      for (int day = 0; day < DAYS; day++) {
        for (int i = 0; i < ROWS_PER_DEVICE_DAY; i++) {
          String id = String.format(Locale.ROOT, "d%02d-%02d-%02d", device, day, i);
          random.nextBytes(payload);
          sb.append(
              String.format(
                  Locale.ROOT,
                  "{\"id\":\"%s\",\"event_time\":%d,\"geometry\":\"POINT(%.5f %.5f)\","
                      + "\"properties\":{\"p\":\"%s\"}}\n",
                  id,
                  day0 + day * 86_400_000L + device * 60_000L + i * 1_000L,
                  -10 + random.nextDouble() * 40,
                  35 + random.nextDouble() * 25,
                  java.util.HexFormat.of().formatHex(payload)));
          ids.add(id);
        }
      }
    }
    Files.writeString(dir.resolve("backfill.ndjson"), sb, StandardCharsets.UTF_8);
    return ids;
  }

  static JobConfig config(Path tmp) {
    Map<String, String> m = new HashMap<>();
    m.put("source", "file:" + tmp.resolve("input"));
    m.put("catalog.warehouse", tmp.resolve("warehouse").toString());
    m.put("checkpoint.interval", "200ms");
    m.put("sink.max-latency", "1h");
    m.put("sink.target-file-size", Long.toString(TARGET));
    m.put("sink.max-open-partitions", "8");
    // one buffer per partition and writer: each partition's files come from one writer
    m.put("sink.distribution", "hash");
    return JobConfig.fromMap(m);
  }

  /**
   * Runs the backfill, each source subtask taking at least {@code perRecord} per record, and {@code
   * beforeFirstCommit} until {@link #COMMITS} counts one.
   */
  static void run(JobConfig config, Duration perRecord, Duration beforeFirstCommit)
      throws Exception {
    Configuration conf = TestKit.fixedDelayRestarts(3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.configureCheckpointing(env, config);
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, true, SpatialIngestJob.decideStart(env, config));
    if (!perRecord.isZero() || !beforeFirstCommit.isZero()) {
      long nanos = perRecord.toNanos();
      long firstNanos = beforeFirstCommit.toNanos();
      records =
          records
              .map(
                  (MapFunction<SourceRecord, SourceRecord>)
                      r -> {
                        long pause = COMMITS.get() == 0 ? Math.max(nanos, firstNanos) : nanos;
                        if (pause > 0) {
                          LockSupport.parkNanos(pause);
                        }
                        return r;
                      })
              .name("paced");
    }
    SpatialIngestJob.sink(SpatialIngestJob.transform(records, config), config);
    env.execute("parked-backfill");
  }

  static Table assertEveryRowOnce(JobConfig config, Set<String> ids) throws Exception {
    Table table = TestKit.table(config);
    List<Record> rows = TestKit.rows(table);
    assertThat(rows).hasSize(ids.size());
    assertThat(TestKit.distinctIds(rows)).isEqualTo(ids);
    return table;
  }

  /** Every partition: all files but one of at least T/2; no file closed by the partition limit. */
  static void assertCompact(Table table) throws Exception {
    Map<Integer, List<Long>> sizes = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        sizes
            .computeIfAbsent(t.file().partition().get(0, Integer.class), d -> new ArrayList<>())
            .add(t.file().fileSizeInBytes());
      }
    }
    assertThat(sizes).hasSize(DAYS);
    for (Map.Entry<Integer, List<Long>> partition : sizes.entrySet()) {
      List<Long> files = partition.getValue();
      assertThat(files.stream().filter(s -> s < TARGET / 2).count())
          .as("files under T/2 in day %d: %s", partition.getKey(), files)
          .isLessThanOrEqualTo(1);
    }
    long byLimit = 0;
    for (Snapshot s : table.snapshots()) {
      byLimit +=
          Long.parseLong(
              s.summary().getOrDefault(SnapshotSummaryKeys.CLOSED_PREFIX + "partition_limit", "0"));
    }
    assertThat(byLimit).as("files closed by the partition limit").isZero();
  }
}
