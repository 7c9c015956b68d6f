package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;
import static org.spatialingest.sink.SinkHarnesses.checkpoint;
import static org.spatialingest.sink.SinkHarnesses.feed;
import static org.spatialingest.sink.SinkHarnesses.forward;
import static org.spatialingest.sink.SinkHarnesses.key;
import static org.spatialingest.sink.SinkHarnesses.rows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Either;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The aggregator ({@link FileBatchAggregator}) in Flink's operator test harness, fed by real
 * writers (also in harnesses) and feeding the real committer, against a real Hadoop table: one
 * batch per barrier from all writers' reports with the positions below what any writer still
 * buffers, no batch for a barrier without files, the end-of-input batch tagged with the
 * aggregator's own next checkpoint, and a restore from an older state that removes its lineage's
 * later batch from the table so the replay commits it once.
 */
class FileBatchAggregatorHarnessTest {
  private static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  @Test
  void allWritersReportsBecomeOneBatchPerBarrierWithPositionsBelowWhatIsStillBuffered()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    long now = System.currentTimeMillis();
    try (var w0 = s.writer(0, 2);
        var w1 = s.writer(1, 2);
        var aggregator = s.aggregator()) {
      w0.open();
      w1.open();
      aggregator.open();
      // writer 0 holds rows old enough to close by latency, writer 1 later fresh ones of the same
      // Kafka partition, which it keeps
      feed(w0, rows(1, 30, 0, 0, DAY_1, now - HOUR));
      feed(w1, rows(2, 30, 0, 30, DAY_1, now));
      for (var w : List.of(w0, w1)) {
        w.prepareSnapshotPreBarrier(1);
        forward(w, aggregator);
      }
      aggregator.prepareSnapshotPreBarrier(1);
      List<FileBatch> first = SinkHarnesses.drain(aggregator);
      assertThat(first).hasSize(1);
      assertThat(first.get(0).checkpointId()).isEqualTo(1);
      assertThat(s.rowCount(first.get(0), 0)).isEqualTo(30);
      assertThat(first.get(0).positions())
          .as("below writer 1's lowest buffered offset, not its highest received")
          .isEqualTo(Map.of(key(0), 30L));

      for (var w : List.of(w0, w1)) {
        w.prepareSnapshotPreBarrier(2);
        forward(w, aggregator);
      }
      aggregator.prepareSnapshotPreBarrier(2);
      assertThat(SinkHarnesses.drain(aggregator)).as("no files, no batch").isEmpty();

      // writers finish at different checkpoints: writer 1 tags its last report with its own next
      // id; the aggregator releases it at its own end of input
      w1.endInput();
      forward(w1, aggregator);
      w0.endInput();
      forward(w0, aggregator);
      aggregator.endInput();
      List<FileBatch> last = SinkHarnesses.drain(aggregator);
      assertThat(last).hasSize(1);
      assertThat(last.get(0).checkpointId()).isEqualTo(3);
      assertThat(s.rowCount(last.get(0), 0)).isEqualTo(30);
      assertThat(last.get(0).positions()).isEqualTo(Map.of(key(0), 60L));
      assertThat(last.get(0).lineage()).isEqualTo(first.get(0).lineage());
    }
  }

  /**
   * Checkpoint 1 commits batch A, checkpoint 2 batch B; the job restores from checkpoint 1's state
   * (a savepoint older than the table): the aggregator removes B (its rows come again from the
   * replay), the committer's pending A is not committed twice.
   */
  @Test
  void aRestoreFromAnOlderStateRemovesTheLaterBatchOfItsLineageAndKeepsTheEarlierOnce()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    long old = System.currentTimeMillis() - HOUR;
    List<Either<RowData, RowData>> a = rows(1, 20, 0, 0, DAY_1, old);
    List<Either<RowData, RowData>> b = rows(2, 20, 0, 20, DAY_1, old);
    OperatorSubtaskState aggregatorAt1;
    OperatorSubtaskState committerAt1;
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      SinkHarnesses.barrier(writer, aggregator, committer, a, 1);
      aggregatorAt1 = aggregator.snapshot(1, 1);
      committerAt1 = committer.snapshot(1, 1);
      committer.notifyOfCompletedCheckpoint(1);

      SinkHarnesses.barrier(writer, aggregator, committer, b, 2);
      committer.snapshot(2, 2);
      committer.notifyOfCompletedCheckpoint(2);
    }
    assertThat(ids(s.table())).hasSize(40);
    assertThat(sinkSnapshots(s.table())).hasSize(2);

    try (var aggregator = s.aggregator();
        var committer = s.committer()) {
      aggregator.initializeState(aggregatorAt1);
      aggregator.open();
      committer.initializeState(committerAt1);
      committer.open();
      committer.notifyOfCompletedCheckpoint(2);
    }
    Table table = s.table();
    assertThat(ids(table)).as("B removed, A once").containsExactlyInAnyOrderElementsOf(idsOf(a));
    assertThat(sinkSnapshots(table)).as("A's commit is not repeated").hasSize(2);
    assertThat(table.currentSnapshot().operation()).isEqualTo("delete");
  }

  /**
   * Batches live in storage while pending ({@link StoredBatch}). Checkpoint 1's batch is pending
   * when the job fails (its completion never reached the committer); the failed attempt had also
   * released checkpoint 2's batch. After the restore from checkpoint 1, the aggregator's clean-up
   * removes checkpoint 2's stored batch and data file (nothing can commit them) and keeps
   * checkpoint 1's, which the restored committer then commits once and deletes.
   */
  @Test
  void aRestoreRemovesTheFailedAttemptsStoredBatchAndKeepsThePendingOne() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    long old = System.currentTimeMillis() - HOUR;
    List<Either<RowData, RowData>> a = rows(1, 10, 0, 0, DAY_1, old);
    OperatorSubtaskState aggregatorAt1;
    OperatorSubtaskState committerAt1;
    List<java.nio.file.Path> pendingData;
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      SinkHarnesses.barrier(writer, aggregator, committer, a, 1);
      aggregatorAt1 = aggregator.snapshot(1, 1);
      committerAt1 = committer.snapshot(1, 1);
      pendingData = dataFiles(s.table());
      feed(writer, rows(2, 10, 0, 10, DAY_1, old));
      writer.prepareSnapshotPreBarrier(2);
      forward(writer, aggregator);
      aggregator.prepareSnapshotPreBarrier(2); // released, never completed
    }
    List<java.nio.file.Path> stored = s.storedBatches();
    assertThat(stored).as("checkpoints 1 and 2 stored their batches").hasSize(2);
    assertThat(dataFiles(s.table())).hasSize(2);

    try (var writer = s.writer(0, 1);
        var aggregator = s.aggregator()) {
      writer.open();
      aggregator.initializeState(aggregatorAt1);
      aggregator.open();
      checkpoint(writer, aggregator, 2); // completes: the first clean-up pass
      assertThat(s.storedBatches())
          .as("the pending batch of checkpoint 1 stays, the failed attempt's is removed")
          .containsExactly(stored.get(0));
      assertThat(dataFiles(s.table()))
          .as("the pending batch's data file stays (read back from its stored batch)")
          .containsExactlyElementsOf(pendingData);
    }
    try (var committer = s.committer()) {
      committer.initializeState(committerAt1);
      committer.open();
      committer.notifyOfCompletedCheckpoint(2);
    }
    assertThat(ids(s.table())).containsExactlyInAnyOrderElementsOf(idsOf(a));
    assertThat(s.storedBatches()).as("deleted once committed").isEmpty();
  }

  /**
   * A writer of the failed attempt, on a TaskManager the JobManager declared lost, runs on until
   * that TaskManager cancels it and may close a file after the restored job's first clean-up (the
   * chaos run's orphans). The second pass, once {@code heartbeat.timeout +
   * task.cancellation.timeout} have passed ({@link org.spatialingest.sink.recovery.CleanupPasses}),
   * removes it; the current writer's file and the committed rows stay.
   */
  @Test
  void aFileAZombieWriterClosesAfterTheFirstCleanupIsRemovedOnceNoEarlierTaskCanWrite()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    org.apache.flink.configuration.Configuration flink =
        new org.apache.flink.configuration.Configuration();
    java.time.Duration bound = java.time.Duration.ofMillis(1500);
    flink.set(org.apache.flink.configuration.HeartbeatManagerOptions.HEARTBEAT_TIMEOUT, bound);
    flink.set(
        org.apache.flink.configuration.TaskManagerOptions.TASK_CANCELLATION_TIMEOUT,
        java.time.Duration.ofMillis(1));
    long old = System.currentTimeMillis() - HOUR;
    try (var writer = s.writer(0, 1);
        var zombie = s.writer(0, 1);
        var aggregator = s.aggregator(new org.apache.flink.api.common.JobID(), flink)) {
      writer.open();
      zombie.open();
      aggregator.open(); // the restart: the bound counts from here
      long started = System.currentTimeMillis();
      feed(writer, rows(1, 10, 0, 0, DAY_1, old));
      checkpoint(writer, aggregator, 1); // the first pass: nothing to remove
      List<java.nio.file.Path> pending = dataFiles(s.table());
      assertThat(pending).as("the current writer's file, closed by L, in a batch").hasSize(1);
      feed(zombie, rows(2, 10, 0, 10, DAY_1, old));
      zombie.endInput(); // its file is written; its report never reaches this aggregator
      List<java.nio.file.Path> left = new ArrayList<>(dataFiles(s.table()));
      left.removeAll(pending);
      assertThat(left).as("the zombie's file").hasSize(1);

      Thread.sleep(Math.max(0, started + bound.toMillis() + 100 - System.currentTimeMillis()));
      feed(writer, rows(3, 10, 0, 20, DAY_1, System.currentTimeMillis())); // buffered, staged
      checkpoint(writer, aggregator, 2); // past the bound: the second pass
      assertThat(dataFiles(s.table()))
          .as("the zombie's file is removed, the pending batch's file stays")
          .containsExactlyElementsOf(pending);
      assertThat(s.stagingRuns()).as("the current writer's run of checkpoint 2 stays").isNotEmpty();
    }
  }

  static List<java.nio.file.Path> dataFiles(Table table) throws java.io.IOException {
    java.nio.file.Path data = SinkHarnesses.local(table.location()).resolve("data");
    if (!java.nio.file.Files.exists(data)) {
      return List.of();
    }
    try (var walk = java.nio.file.Files.walk(data)) {
      return walk.filter(p -> p.toString().endsWith(".parquet")).toList();
    }
  }

  /**
   * Real writer and aggregator: a barrier where nothing closed carries no positions though the
   * writer received more; a file closed with higher positions of a key the writer still buffers
   * brings its received position along, so after a restore that brings back only the lower,
   * buffered rows the position is still the one the complete reports gave (50, not the restored
   * writer's 30).
   */
  @Test
  void quietBarriersCarryNoPositionsAndARestoreKeepsThePositionOfAClosedHigherFile()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    long now = System.currentTimeMillis();
    OperatorSubtaskState writerAt3;
    OperatorSubtaskState aggregatorAt3;
    try (var writer = s.writer(0, 1);
        var aggregator = s.aggregator()) {
      writer.open();
      aggregator.open();
      feed(writer, rows(1, 20, 0, 0, DAY_1 + 24 * HOUR, now));
      writer.prepareSnapshotPreBarrier(1);
      List<WriterReport> first = SinkHarnesses.drain(writer);
      assertThat(first.get(0).complete()).as("a writer's first report").isTrue();
      assertThat(first.get(0).receivedEnds()).isEqualTo(Map.of(key(0), 20L));
      aggregator.processElement(new StreamRecord<>(commitTo(first.get(0), 1)));
      aggregator.prepareSnapshotPreBarrier(1);

      feed(writer, rows(2, 10, 0, 20, DAY_1 + 24 * HOUR, now));
      writer.prepareSnapshotPreBarrier(2);
      List<WriterReport> quiet = SinkHarnesses.drain(writer);
      assertThat(quiet.get(0).positionEntries())
          .as("received 30 now, but still buffers from 0: nothing to tell")
          .isZero();
      aggregator.processElement(new StreamRecord<>(commitTo(quiet.get(0), 2)));
      aggregator.prepareSnapshotPreBarrier(2);

      // older rows of the same key, in another partition, close by latency at the next barrier
      feed(writer, rows(3, 20, 0, 30, DAY_1, now - HOUR));
      writer.prepareSnapshotPreBarrier(3);
      List<WriterReport> closing = SinkHarnesses.drain(writer);
      writerAt3 = writer.snapshot(3, 3);
      assertThat(closing.get(0).closed().size()).isEqualTo(1);
      assertThat(closing.get(0).receivedEnds())
          .as("a closed file holds rows of the key: its received position comes along")
          .isEqualTo(Map.of(key(0), 50L));
      assertThat(closing.get(0).buffered()).as("its lowest is still 0").isEmpty();
      aggregator.processElement(new StreamRecord<>(commitTo(closing.get(0), 3)));
      aggregator.prepareSnapshotPreBarrier(3);
      List<FileBatch> batch = SinkHarnesses.drain(aggregator);
      assertThat(batch.get(0).positions()).isEqualTo(Map.of(key(0), 0L));
      aggregatorAt3 = aggregator.snapshot(3, 3);
    }

    try (var writer = s.writer(0, 1);
        var aggregator = s.aggregator()) {
      writer.initializeState(writerAt3);
      writer.open();
      aggregator.initializeState(aggregatorAt3);
      aggregator.open();
      writer.endInput();
      SinkHarnesses.forward(writer, aggregator);
      aggregator.endInput();
      List<FileBatch> last = SinkHarnesses.drain(aggregator);
      assertThat(s.rowCount(last.get(0), 0)).as("the 30 restored rows").isEqualTo(30);
      assertThat(last.get(0).positions())
          .as("everything below 50 is in a closed file")
          .isEqualTo(Map.of(key(0), 50L));
    }
  }

  private static CommittableWithLineage<WriterReport> commitTo(WriterReport report, long id) {
    return new CommittableWithLineage<>(report, id, 0);
  }

  static List<String> ids(Table table) throws Exception {
    table.refresh();
    return new ArrayList<>(TestKit.distinctIds(TestKit.rows(table)));
  }

  static List<String> idsOf(List<Either<RowData, RowData>> rows) {
    return rows.stream().map(r -> r.left().getString(0).toString()).toList();
  }

  /** The table's snapshots that carry a sink batch id. */
  static List<Snapshot> sinkSnapshots(Table table) {
    table.refresh();
    List<Snapshot> sink = new ArrayList<>();
    for (Snapshot snapshot : table.snapshots()) {
      if (snapshot.summary().containsKey(SnapshotSummaryKeys.BATCH_ID)) {
        sink.add(snapshot);
      }
    }
    return sink;
  }
}
