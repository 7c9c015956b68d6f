package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;
import static org.spatialingest.sink.SinkHarnesses.feed;
import static org.spatialingest.sink.SinkHarnesses.forward;
import static org.spatialingest.sink.SinkHarnesses.key;
import static org.spatialingest.sink.SinkHarnesses.rows;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.ids;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.idsOf;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.sinkSnapshots;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
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
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      feed(writer, input);
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
      // the runs go on the committer's delete thread, off the commit path (FileDeletes)
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!s.stagingRuns().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
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
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      SinkHarnesses.barrier(writer, aggregator, committer, input, 1);
      pending = committer.snapshot(1, 1);
      // the job fails before checkpoint 1's completion reaches the committer
    }
    assertThat(s.table().currentSnapshot()).isNull();
    assertThat(s.storedBatches())
        .as("the pending batch's files, where its state points")
        .hasSize(1);

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
      // the committer's close waits for its deletes: the second restore finds the file gone and
      // must not need it
      assertThat(s.storedBatches()).as("restore %d: deleted once committed", restore).isEmpty();
    }
  }

  /**
   * The committer's state is the pending batch: it must not grow with the batch's files (issue #37:
   * 40.8 MB at 1,024 writers when the files were in it). Two checkpoints through real writer,
   * aggregator and committer, one closing 2 files, one 24 (one per day partition): the committer's
   * and the aggregator's checkpointed state differ by less than 16 bytes per extra file (a closed
   * file inline took ~2.5 KB at scale, here ~1 KB).
   */
  @Test
  void theCommittersAndAggregatorsStateDoNotGrowWithTheBatchsFiles() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    long old = System.currentTimeMillis() - HOUR;
    long day = 24 * HOUR;
    int[] days = {2, 24};
    long[] committerState = new long[days.length];
    long[] aggregatorState = new long[days.length];
    List<String> expected = new java.util.ArrayList<>();
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      long offset = 0;
      for (int c = 0; c < days.length; c++) {
        long cp = c + 1;
        for (int d = 0; d < days[c]; d++) {
          List<Either<RowData, RowData>> input =
              rows(cp * 100 + d, 3, 0, offset, DAY_1 + d * day, old);
          offset += input.size();
          expected.addAll(idsOf(input));
          feed(writer, input);
        }
        writer.prepareSnapshotPreBarrier(cp);
        forward(writer, aggregator);
        aggregator.prepareSnapshotPreBarrier(cp);
        aggregatorState[c] = aggregator.snapshot(cp, cp).getStateSize();
        forward(aggregator, committer);
        committerState[c] = committer.snapshot(cp, cp).getStateSize();
        committer.notifyOfCompletedCheckpoint(cp);
        assertThat(sinkSnapshots(s.table()).get((int) cp - 1).summary())
            .as("checkpoint %d's files", cp)
            .containsEntry(SnapshotSummaryKeys.FILES, Integer.toString(days[c]));
      }
    }
    assertThat(ids(s.table())).containsExactlyInAnyOrderElementsOf(expected);
    int extraFiles = days[1] - days[0];
    assertThat(committerState[1] - committerState[0])
        .as(
            "committer state %s bytes for %s files",
            java.util.Arrays.toString(committerState), java.util.Arrays.toString(days))
        .isLessThan(16L * extraFiles);
    assertThat(aggregatorState[1] - aggregatorState[0])
        .as(
            "aggregator state %s bytes for %s files",
            java.util.Arrays.toString(aggregatorState), java.util.Arrays.toString(days))
        .isLessThan(16L * extraFiles);
  }

  /**
   * A start without state that reuses the job id (application mode with a fixed job id after its HA
   * data is gone) counts checkpoints from 1 again. Iceberg's own sink skips commits it believes it
   * made (apache/iceberg#18098); this one keys commits by content and commits the new data.
   */
  @Test
  void aStartWithoutStateThatReusesTheJobIdCommitsAtCheckpointIdsItAlreadyUsed() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    JobID fixed = new JobID();
    long old = System.currentTimeMillis() - HOUR;
    List<String> expected = new java.util.ArrayList<>();
    int checkpoints = 3;
    for (int run = 0; run < 2; run++) {
      try (var writer = s.writer(0, 1);
          var aggregator = s.aggregator(fixed);
          var committer = s.committer(fixed)) {
        writer.open();
        aggregator.open();
        committer.open();
        for (long cp = 1; cp <= (run == 0 ? checkpoints : 1); cp++) {
          List<Either<RowData, RowData>> input = rows(run * 10 + cp, 10, run, cp * 10, DAY_1, old);
          expected.addAll(idsOf(input));
          SinkHarnesses.commitThrough(writer, aggregator, committer, input, cp);
        }
      }
    }
    Table table = s.table();
    assertThat(ids(table)).containsExactlyInAnyOrderElementsOf(expected);
    List<Snapshot> commits = sinkSnapshots(table);
    assertThat(commits).hasSize(checkpoints + 1);
    assertThat(commits)
        .extracting(c -> c.summary().get(SnapshotSummaryKeys.FLINK_JOB_ID))
        .containsOnly(fixed.toHexString());
    Snapshot last = commits.get(commits.size() - 1);
    assertThat(last.summary().get(SnapshotSummaryKeys.CHECKPOINT_ID))
        .as("the second run committed at a checkpoint id the first had already committed")
        .isEqualTo("1");
    assertThat(last.summary().get(SnapshotSummaryKeys.LINEAGE))
        .isNotEqualTo(commits.get(0).summary().get(SnapshotSummaryKeys.LINEAGE));
  }

  /**
   * A long-running job commits every L: the manifest list and the metadata files must not grow with
   * the number of commits (issue #37, item 5). Iceberg merges manifests on an append (as its own
   * Flink committers do) once a snapshot has {@code commit.manifest.min-count-to-merge} of them;
   * the sink's tables keep only {@code write.metadata.previous-versions-max} (10, set when it
   * creates them) old metadata files. The merge threshold is lowered here so that 12 commits show
   * it; the 14 metadata versions they make (with the table's creation and that property) show the
   * other.
   */
  @Test
  void manifestsAndMetadataFilesStayBoundedOverManyCommits() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    int commits = 12;
    int mergeAt = 4;
    int keptVersions = 10; // what TableBootstrap sets on the tables it creates
    List<String> expected = new java.util.ArrayList<>();
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      s.table()
          .updateProperties()
          .set(
              org.apache.iceberg.TableProperties.MANIFEST_MIN_MERGE_COUNT,
              Integer.toString(mergeAt))
          .commit();
      long old = System.currentTimeMillis() - HOUR;
      for (long cp = 1; cp <= commits; cp++) {
        List<Either<RowData, RowData>> input = rows(cp, 5, 0, cp * 5, DAY_1, old);
        expected.addAll(idsOf(input));
        SinkHarnesses.commitThrough(writer, aggregator, committer, input, cp);
      }
    }
    Table table = s.table();
    assertThat(ids(table)).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(sinkSnapshots(table)).hasSize(commits);
    assertThat(table.currentSnapshot().allManifests(table.io()))
        .as(
            "manifests of the current snapshot after %d commits (one each without merging)",
            commits)
        .hasSizeLessThanOrEqualTo(mergeAt);
    try (var files =
        java.nio.file.Files.list(SinkHarnesses.local(table.location() + "/metadata"))) {
      assertThat(files.filter(f -> f.toString().endsWith(".metadata.json")).count())
          .as("metadata files after %d commits", commits)
          .isLessThanOrEqualTo(keptVersions + 1);
    }
  }
}
