package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;
import static org.spatialingest.sink.SinkHarnesses.forward;
import static org.spatialingest.sink.SinkHarnesses.key;
import static org.spatialingest.sink.SinkHarnesses.rows;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.ids;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.idsOf;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.sinkSnapshots;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Either;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TablePositions;

/**
 * The committer ({@link IcebergBatchCommitter}) as Flink runs it ({@code CommitterOperator} in
 * Flink's operator test harness), fed batches by the real writer and aggregator, against real
 * Hadoop tables: nothing is committed before its checkpoint completes; then one snapshot per table
 * with the batch id, the positions on the telemetry table, and the batch's staging runs deleted; a
 * batch pending in a restored state is committed once, and a re-commit after a lost acknowledgement
 * changes nothing.
 */
class IcebergBatchCommitterHarnessTest {
  private static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  @Test
  void aBatchIsCommittedWhenItsCheckpointCompletesWithThePositionsAndItsRunsAreDeleted()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "1h"));
    long now = System.currentTimeMillis();
    List<Either<RowData, RowData>> input = rows(1, 40, 0, 0, DAY_1, now);
    try (var writer = s.writer(0, 1);
        var aggregator = s.aggregator();
        var committer = s.committer()) {
      writer.open();
      aggregator.open();
      committer.open();
      for (Either<RowData, RowData> row : input) {
        writer.processElement(new StreamRecord<>(row));
      }
      writer.processElement(new StreamRecord<>(SinkHarnesses.reject(0, 40, now)));
      writer.prepareSnapshotPreBarrier(1);
      writer.snapshot(1, 1);
      assertThat(s.stagingRuns()).as("a run per table").hasSize(2);
      forward(writer, aggregator);
      aggregator.prepareSnapshotPreBarrier(1);
      writer.endInput();
      forward(writer, aggregator);
      aggregator.endInput();
      forward(aggregator, committer);
      committer.snapshot(2, 2);
      assertThat(s.table().currentSnapshot())
          .as("nothing before the checkpoint completes")
          .isNull();

      committer.notifyOfCompletedCheckpoint(2);
      Table table = s.table();
      assertThat(ids(table)).containsExactlyInAnyOrderElementsOf(idsOf(input));
      assertThat(TablePositions.read(table)).isEqualTo(Map.of(key(0), 41L));
      Map<String, String> summary = table.currentSnapshot().summary();
      assertThat(summary).containsEntry(SnapshotSummaryKeys.CHECKPOINT_ID, "2");
      assertThat(summary).containsEntry(SnapshotSummaryKeys.CLOSED_PREFIX + "end_of_input", "1");
      Table rejects = s.rejectsTable();
      assertThat(TestKit.rows(rejects)).hasSize(1);
      assertThat(rejects.currentSnapshot().summary().get(SnapshotSummaryKeys.BATCH_ID))
          .as("one batch, both tables")
          .isEqualTo(summary.get(SnapshotSummaryKeys.BATCH_ID));
      assertThat(s.stagingRuns()).as("the batch's runs are deleted once it is committed").isEmpty();
    }
  }

  @Test
  void aPendingBatchRestoredIsCommittedOnceAndARecommitAfterALostAckChangesNothing()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    List<Either<RowData, RowData>> input =
        rows(1, 30, 0, 0, DAY_1, System.currentTimeMillis() - HOUR);
    OperatorSubtaskState pending;
    try (var writer = s.writer(0, 1);
        var aggregator = s.aggregator();
        var committer = s.committer()) {
      writer.open();
      aggregator.open();
      committer.open();
      for (Either<RowData, RowData> row : input) {
        writer.processElement(new StreamRecord<>(row));
      }
      writer.prepareSnapshotPreBarrier(1);
      forward(writer, aggregator);
      aggregator.prepareSnapshotPreBarrier(1);
      forward(aggregator, committer);
      pending = committer.snapshot(1, 1);
      // the job fails before checkpoint 1's completion reaches the committer
    }
    assertThat(s.table().currentSnapshot()).isNull();

    for (int restore = 1; restore <= 2; restore++) {
      // the second restore is a re-commit after a lost acknowledgement: the batch is in the table
      try (var committer = s.committer()) {
        committer.initializeState(pending);
        committer.open();
        committer.notifyOfCompletedCheckpoint(2);
      }
      Table table = s.table();
      assertThat(ids(table))
          .as("restore %d", restore)
          .containsExactlyInAnyOrderElementsOf(idsOf(input));
      List<Snapshot> commits = sinkSnapshots(table);
      assertThat(commits).as("restore %d: one commit of the batch", restore).hasSize(1);
      assertThat(TablePositions.read(table)).isEqualTo(Map.of(key(0), 30L));
    }
  }
}
