package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.commit.IcebergBatchCommitter;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.recovery.OrphanCleaner;
import org.spatialingest.sink.recovery.RestoreReconciler;
import org.spatialingest.sink.recovery.StagingReferences;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;

/**
 * Snapshot expiry in the sink's job, on a real broker, MiniCluster and Hadoop catalog, both ways:
 * by the sink's committer (the default) and by Iceberg's Flink table maintenance (with a SQLite
 * lock): the snapshot count stays bounded over many commits, through a failure after a commit
 * without a lost or duplicated row, and after expiry the sink's lookups (batch ids before a
 * recommit, positions for a start without state) still answer, or refuse loudly when the history
 * they need is gone.
 */
class TableMaintenanceTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  /** Commits the first test makes (every one a snapshot of the telemetry table). */
  private static final int COMMITS = 40;

  @AfterEach
  void removeFaults() {
    SinkFaults.install(null);
  }

  /** The default: the sink's committer expires, no lock, nothing else in the job. */
  @Test
  void theSinksExpiryKeepsSnapshotsBoundedAndNoRowIsLostOrDuplicated(@TempDir Path dir)
      throws Exception {
    snapshotsStayBoundedAndNoRowIsLostOrDuplicated(dir, "sink-expiry", Map.of());
  }

  @Test
  @Tag("extended") // maintenance.enabled is opt-in (off by default); ~26 s
  void icebergsMaintenanceKeepsSnapshotsBoundedAndNoRowIsLostOrDuplicated(@TempDir Path dir)
      throws Exception {
    snapshotsStayBoundedAndNoRowIsLostOrDuplicated(
        dir,
        "maintenance",
        Map.of(
            "maintenance.enabled", "true",
            "maintenance.lock.jdbc-uri", "jdbc:sqlite:" + dir.resolve("locks.db"),
            "maintenance.rate-limit", "1s"));
  }

  private void snapshotsStayBoundedAndNoRowIsLostOrDuplicated(
      Path dir, String topic, Map<String, String> maintenance) throws Exception {
    kafka.createTopic(topic, 2);
    Map<String, String> keys = new HashMap<>(maintenance);
    keys.put("sink.max-latency", "500ms");
    keys.put("maintenance.expire-snapshots.max-age", "2s");
    keys.put("maintenance.expire-snapshots.retain-last", "2");
    keys.put("maintenance.expire-snapshots.every-commits", "5");
    JobConfig config = TestKit.config(kafka.bootstrapServers(), topic, dir, keys);
    AtomicInteger commits = new AtomicInteger();
    AtomicBoolean injected = new AtomicBoolean();
    SinkFaults.install(
        p -> {
          // a crash after the 12th commit, before Flink knows: the restart recommits that batch
          // after expiries ran
          if (p == SinkFaults.Point.AFTER_COMMIT
              && commits.incrementAndGet() == 12
              && injected.compareAndSet(false, true)) {
            throw new IllegalStateException("injected failure after a commit");
          }
        });

    Configuration conf = TestKit.fixedDelayRestarts(3);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    JobClient job = env.executeAsync(topic);

    Map<String, TelemetryGenerator.Record> sent = new ConcurrentHashMap<>();
    TelemetryGenerator gen = new TelemetryGenerator(11, 20, 0, 0);
    Table table = TestKit.table(config);
    int maxSnapshots = 0;
    try {
      // a trickle of records until the sink has committed COMMITS times, however slow this machine
      // is
      long stop = System.currentTimeMillis() + 300_000;
      while (commits.get() < COMMITS && System.currentTimeMillis() < stop) {
        sent.putAll(TestKit.produce(kafka.bootstrapServers(), topic, gen, 20));
        Thread.sleep(200);
        table.refresh();
        if (table.currentSnapshot() != null) {
          maxSnapshots = Math.max(maxSnapshots, count(table.snapshots()));
        }
      }
      long deadline = System.currentTimeMillis() + 120_000;
      while (TestKit.rows(table).size() < sent.size() && System.currentTimeMillis() < deadline) {
        Thread.sleep(300);
      }
      // and a little longer: maintenance after the last commits, beside an idle sink
      Thread.sleep(3_000);
    } finally {
      TestKit.cancelAndWait(job);
    }

    table.refresh();
    long made = table.currentSnapshot().sequenceNumber();
    int kept = count(table.snapshots());
    System.out.printf(
        topic + ": %d commits made, %d snapshots kept at the end, at most %d seen during the run%n",
        made,
        kept,
        maxSnapshots);
    List<Record> rows = TestKit.rows(table);
    assertThat(TestKit.distinctIds(rows)).isEqualTo(sent.keySet());
    assertThat(rows).hasSize(sent.size());
    assertThat(injected).as("the failure after a commit happened").isTrue();

    assertThat(made).as("commits made").isGreaterThanOrEqualTo(COMMITS);
    assertThat(table.snapshot(firstSnapshotId(table)).parentId())
        .as("the oldest snapshots are expired")
        .isNotNull();
    // what can stay: retain-last 2 + the commits of the last max-age 2s (C = 300 ms: ~7) + the up
    // to 5 commits before
    // the next trigger + those of the rate limit's 1s (~4): about 18, however many commits were
    // made
    assertThat(maxSnapshots)
        .as("snapshots kept at any time, of %d commits", made)
        .isLessThanOrEqualTo(20);
    assertThat(kept)
        .as("snapshots kept at the end, of %d commits", made)
        .isLessThanOrEqualTo(20)
        .isLessThan((int) made / 2);
    // the expired snapshots' garbage went with them: their manifest lists are deleted
    try (Stream<Path> metadata =
        Files.list(Path.of(table.location().replaceFirst("^file:", "")).resolve("metadata"))) {
      assertThat(metadata.filter(p -> p.getFileName().toString().startsWith("snap-")).count())
          .as("manifest lists left, for %d snapshots kept", kept)
          .isLessThanOrEqualTo(kept + 5);
    }

    // positions after expiry: the current snapshot has them, and a start without state adds nothing
    Map<String, Long> positions = TablePositions.read(table);
    assertThat(positions.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(sent.size());
    StreamExecutionEnvironment again = StreamExecutionEnvironment.getExecutionEnvironment();
    again.setParallelism(2);
    SpatialIngestJob.build(again, config.with(Map.of("kafka.starting-offsets", "table")), true);
    again.execute("restart-without-state");
    assertThat(TestKit.rows(TestKit.table(config))).hasSize(sent.size());
  }

  /**
   * The lookups refuse to guess past expired history (a too short retention fails loudly, never
   * duplicates).
   */
  @Test
  @Tag("extended")
  void lookupsRefuseWhenTheHistoryTheyNeedIsExpired(@TempDir Path dir) throws Exception {
    Table table = newTable(dir);
    List<Long> times = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      table
          .newFastAppend()
          .set(SnapshotSummaryKeys.BATCH_ID, "lineage-" + i)
          .set(SnapshotSummaryKeys.LINEAGE, "lineage")
          .set(SnapshotSummaryKeys.POSITIONS, "{\"t/0\":" + i + "}")
          .commit();
      table.refresh();
      times.add(table.currentSnapshot().timestampMillis());
      Thread.sleep(5);
    }
    long beforeFirst = times.get(0) - 1;
    // every batch is found while the history is whole
    assertThat(IcebergBatchCommitter.alreadyCommitted(table, "lineage-0", beforeFirst)).isTrue();
    assertThat(IcebergBatchCommitter.alreadyCommitted(table, "other", beforeFirst)).isFalse();

    table
        .expireSnapshots()
        .expireOlderThan(times.get(3))
        .retainLast(1)
        .commit(); // keeps the last three
    table.refresh();
    assertThat(count(table.snapshots())).isEqualTo(3);
    // a batch made before the retained history: cannot tell, so no guess (a guess of "no" would
    // duplicate it)
    assertThatThrownBy(
            () -> IcebergBatchCommitter.alreadyCommitted(table, "lineage-1", beforeFirst))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("expired");
    // a batch made within it: answered
    assertThat(IcebergBatchCommitter.alreadyCommitted(table, "lineage-4", times.get(4) - 1))
        .isTrue();
    assertThat(IcebergBatchCommitter.alreadyCommitted(table, "later", times.get(5) + 1)).isFalse();
    // positions: from the current snapshot, expiry or not
    assertThat(TablePositions.read(table)).isEqualTo(Map.of("t/0", 5L));

    // a restore to a state older than the retained history cannot find every batch committed since:
    // refused
    assertThatThrownBy(
            () ->
                RestoreReconciler.reconcile(
                    List.of(table), "lineage", Set.of(), beforeFirst, null, null, Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("expired");
    // to a state within it: the newer batches are reverted as always
    assertThat(
            RestoreReconciler.reconcile(
                List.of(table), "lineage", Set.of("lineage-3"), times.get(3), null, null, Map.of()))
        .containsExactly(2);
  }

  /**
   * After a restore the sink removes files its earlier writers left uncommitted, knowing the
   * committed ones from the snapshots since its horizon; once those snapshots are expired it must
   * still keep a file that is live in the table (it deleted committed files before, found by the
   * test above).
   */
  @Test
  @Tag("extended")
  void theOrphanCleanerKeepsFilesCommittedInExpiredSnapshots(@TempDir Path dir) throws Exception {
    Table table = newTable(dir);
    String uid = "spatial-sink";
    String oldToken = "0123456789abcdef0123456789abcdef";
    long horizon = System.currentTimeMillis() - 60_000;
    String committed =
        table.location() + "/data/00000-0-" + uid + "_" + oldToken + "-00001.parquet";
    String uncommitted =
        table.location() + "/data/00000-0-" + uid + "_" + oldToken + "-00002.parquet";
    for (String location : List.of(committed, uncommitted)) {
      try (var out = table.io().newOutputFile(location).create()) {
        out.write(new byte[] {1});
      }
    }
    table
        .newFastAppend()
        .appendFile(
            org.apache.iceberg.DataFiles.builder(table.spec())
                .withPath(committed)
                .withFileSizeInBytes(1)
                .withRecordCount(1)
                .withPartitionPath("event_time_day=2026-11-30")
                .build())
        .commit();
    for (int i = 0; i < 3; i++) {
      table.newFastAppend().set(SnapshotSummaryKeys.BATCH_ID, "later-" + i).commit();
    }
    table.refresh();
    table.expireSnapshots().expireOlderThan(System.currentTimeMillis() + 1).retainLast(1).commit();

    table.refresh();
    assertThat(table.io().newInputFile(committed).exists()).as("expiry keeps a live file").isTrue();
    int deleted =
        OrphanCleaner.clean(
            table,
            new org.spatialingest.sink.core.SinkScope(uid, "it", true), // names of earlier builds
            Set.of("fedcba9876543210fedcba9876543210"),
            new StagingReferences(0, null),
            horizon,
            Set.of(),
            new HashSet<>());

    assertThat(table.io().newInputFile(committed).exists())
        .as("a file the table holds is not an orphan")
        .isTrue();
    assertThat(table.io().newInputFile(uncommitted).exists())
        .as("the uncommitted one is")
        .isFalse();
    assertThat(deleted).isEqualTo(1);
  }

  /** An empty telemetry table in a Hadoop catalog under {@code dir}. */
  private static Table newTable(Path dir) {
    return TestKit.newTable(TestKit.config("localhost:1", "unused", dir, Map.of()));
  }

  private static long firstSnapshotId(Table table) {
    Snapshot s = table.currentSnapshot();
    while (s.parentId() != null && table.snapshot(s.parentId()) != null) {
      s = table.snapshot(s.parentId());
    }
    return s.snapshotId();
  }

  private static int count(Iterable<Snapshot> snapshots) {
    int n = 0;
    for (Snapshot ignored : snapshots) {
      n++;
    }
    return n;
  }
}
