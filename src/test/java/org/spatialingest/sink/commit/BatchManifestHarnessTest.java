package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.spatialingest.sink.SinkHarnesses.DAY_1;
import static org.spatialingest.sink.SinkHarnesses.checkpoint;
import static org.spatialingest.sink.SinkHarnesses.feed;
import static org.spatialingest.sink.SinkHarnesses.forward;
import static org.spatialingest.sink.SinkHarnesses.rows;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.idsOf;
import static org.spatialingest.sink.commit.FileBatchAggregatorHarnessTest.sinkSnapshots;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Either;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.sink.SinkHarnesses;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkFileNames;

/**
 * Issue #37 item 3: the committer appends a batch's files as one manifest per table, the writers'
 * manifests concatenated without decoding a data file ({@link BatchManifests}), adopted by the
 * append as it is. Real writers, aggregator and committer in Flink's harnesses, real Hadoop tables.
 *
 * <p>Both tests run the same first attempt: two writers (one per day) each close a file at
 * checkpoint 1, which is committed; checkpoint 2's committer fails after writing its batch's
 * manifest and before the commit ({@link SinkFaults.Point#AFTER_BATCH_MANIFEST}).
 */
class BatchManifestHarnessTest {
  private static final long HOUR = 3_600_000L;
  private static final long DAY_2 = DAY_1 + 24 * HOUR;

  @TempDir Path dir;

  @AfterEach
  void noFaults() {
    SinkFaults.install(null);
  }

  /**
   * Checkpoint 1's commit adds exactly one manifest, named after its stored batch, listing both
   * writers' files; every row is in the table once, and a scan for the second day plans exactly its
   * writer's file (the concatenated manifest's partition summaries cover both writers, or the
   * manifest would be skipped). A restore of the state at checkpoint 2 commits that batch once,
   * from the manifest the failed attempt wrote (no second copy), and the restored aggregator's
   * clean-up keeps it: the table lists it.
   */
  @Test
  void aBatchIsCommittedFromItsOneManifestOnceAndARestoreCommitsThePendingOneFromItsManifest()
      throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    Attempt attempt = failingAttempt(s);

    Table table = s.table();
    List<ManifestFile> added = added(table);
    assertThat(added).as("one manifest per table and batch, not one per writer").hasSize(1);
    assertThat(SinkFileNames.parseBatchManifest(s.scope(), added.get(0).path()))
        .as("named after checkpoint 1's stored batch")
        .isNotNull()
        .extracting(SinkFileNames.StagingName::checkpointId)
        .isEqualTo(1L);
    assertThat(filesIn(table, added.get(0)))
        .as("both writers' files, with their column metrics")
        .hasSize(2)
        .allSatisfy(f -> assertThat(f.lowerBounds()).isNotEmpty());
    assertThat(TestKit.rows(table)).as("every row once").hasSize(attempt.firstRows.size());
    assertThat(TestKit.distinctIds(TestKit.rows(table)))
        .containsExactlyInAnyOrderElementsOf(idsOf(attempt.firstRows));
    long bytes = filesIn(table, added.get(0)).stream().mapToLong(DataFile::fileSizeInBytes).sum();
    assertThat(table.currentSnapshot().summary())
        .as("Iceberg's size totals count the adopted manifest's files")
        .containsEntry("added-files-size", Long.toString(bytes))
        .containsEntry("total-files-size", Long.toString(bytes));
    assertThat(planned(table, DAY_2))
        .as("the second day's file is planned: the manifest's summaries cover both writers")
        .hasSize(1);
    assertThat(sinkSnapshots(table)).as("checkpoint 2 is not committed").hasSize(1);
    assertThat(batchManifests(s, table)).as("checkpoint 2's manifest is written").hasSize(2);

    try (var writer = s.writer(0, 2);
        var aggregator = s.aggregator();
        var committer = s.committer()) {
      writer.initializeState(attempt.writerAt2);
      writer.open();
      aggregator.initializeState(attempt.aggregatorAt2);
      aggregator.open();
      committer.initializeState(attempt.committerAt2);
      committer.open();
      committer.notifyOfCompletedCheckpoint(3);
      checkpoint(writer, aggregator, 3); // completes: the restored aggregator's clean-up
    }
    table.refresh();
    List<String> all = new ArrayList<>(idsOf(attempt.firstRows));
    all.addAll(idsOf(attempt.secondRows));
    assertThat(TestKit.rows(table)).as("every row once").hasSize(all.size());
    assertThat(TestKit.distinctIds(TestKit.rows(table))).containsExactlyInAnyOrderElementsOf(all);
    assertThat(sinkSnapshots(table)).as("checkpoint 2 committed once").hasSize(2);
    long total = 0;
    for (ManifestFile m : table.currentSnapshot().dataManifests(table.io())) {
      total += filesIn(table, m).stream().mapToLong(DataFile::fileSizeInBytes).sum();
    }
    assertThat(table.currentSnapshot().summary())
        .containsEntry("total-files-size", Long.toString(total));
    List<ManifestFile> second = added(table);
    assertThat(second).hasSize(1);
    assertThat(filesIn(table, second.get(0))).hasSize(1);
    assertThat(batchManifests(s, table))
        .as("the manifest written before the failure is the one committed, and kept")
        .containsExactlyInAnyOrder(
            SinkHarnesses.local(added.get(0).path()), SinkHarnesses.local(second.get(0).path()));
  }

  /**
   * A restore of the state at checkpoint 1 (after its commit, before checkpoint 2's batch): nothing
   * will commit checkpoint 2's batch, so the restored aggregator's clean-up removes its manifest
   * (no snapshot lists it) with its stored batch, and keeps checkpoint 1's; the table still holds
   * checkpoint 1's rows, once.
   */
  @Test
  void aManifestNothingWillCommitIsRemovedByTheCleanupAfterARestore() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    Attempt attempt = failingAttempt(s);
    Table table = s.table();
    String committed = added(table).get(0).path();
    assertThat(batchManifests(s, table)).hasSize(2);

    try (var writer = s.writer(0, 2);
        var aggregator = s.aggregator()) {
      writer.initializeState(attempt.writerAt1);
      writer.open();
      aggregator.initializeState(attempt.aggregatorAt1);
      aggregator.open();
      checkpoint(writer, aggregator, 2); // completes: the first clean-up pass
    }
    assertThat(batchManifests(s, table))
        .as("checkpoint 2's manifest is removed, checkpoint 1's (committed) kept")
        .containsExactly(SinkHarnesses.local(committed));
    assertThat(s.storedBatches()).as("and checkpoint 2's stored batch").isEmpty();
    table.refresh();
    assertThat(TestKit.rows(table)).hasSize(attempt.firstRows.size());
    assertThat(TestKit.distinctIds(TestKit.rows(table)))
        .containsExactlyInAnyOrderElementsOf(idsOf(attempt.firstRows));
  }

  /**
   * The full chaos run found a snapshot listing a batch manifest that was gone. The mechanism, made
   * certain here: the primary table's commit is a transaction (append and tag); when the
   * transaction fails after its append merged manifests (at {@code
   * commit.manifest.min-count-to-merge}), Iceberg's clean-up of the failed transaction deletes the
   * batch's manifest, which the merging attempt had handed to the table; the committer's next
   * transaction, on a table whose manifests a concurrent writer rewrote meanwhile, no longer merges
   * and adopts the manifest as it is, without reading it. The committer must write it again first.
   * Iceberg gets no retries of its own here ({@code commit.retry.num-retries: 0}), so the first
   * conflict fails the transaction.
   */
  @Test
  void aCommitRetriedAfterAMergingAttemptFailedStillFindsItsManifest() throws Exception {
    SinkHarnesses s = new SinkHarnesses(dir, Map.of("sink.max-latency", "10min"));
    s.table()
        .updateProperties()
        .set(TableProperties.MANIFEST_MIN_MERGE_COUNT, "3")
        .set(TableProperties.COMMIT_NUM_RETRIES, "0")
        .commit();
    long old = System.currentTimeMillis() - HOUR;
    List<String> ids = new ArrayList<>();
    AtomicInteger concurrentRewrites = new AtomicInteger();
    try (var chain = s.openChain()) {
      var writer = chain.writer();
      var aggregator = chain.aggregator();
      var committer = chain.committer();
      for (int id = 1; id <= 3; id++) {
        List<Either<RowData, RowData>> rows = rows(id, 10, 0, (id - 1) * 10L, DAY_1, old);
        ids.addAll(idsOf(rows));
        if (id == 3) { // two manifests in the table, the third one's append merges
          SinkFaults.install(
              point -> {
                if (point == SinkFaults.Point.IN_COMMIT_TRANSACTION
                    && concurrentRewrites.getAndIncrement() == 0) {
                  s.table().rewriteManifests().rewriteIf(m -> true).commit();
                }
              });
        }
        SinkHarnesses.barrier(writer, aggregator, committer, rows, id);
        committer.snapshot(id, id);
        committer.notifyOfCompletedCheckpoint(id);
      }
    }
    assertThat(concurrentRewrites.get())
        .as("the first transaction conflicted with the rewrite and a second one committed")
        .isEqualTo(2);
    Table table = s.table();
    for (ManifestFile m : table.currentSnapshot().allManifests(table.io())) {
      assertThat(table.io().newInputFile(m.path()).exists())
          .as("every manifest the table lists is there: %s", m.path())
          .isTrue();
    }
    assertThat(sinkSnapshots(table)).as("three batches, each committed once").hasSize(3);
    assertThat(TestKit.rows(table)).as("every row once").hasSize(ids.size());
    assertThat(TestKit.distinctIds(TestKit.rows(table))).containsExactlyInAnyOrderElementsOf(ids);
  }

  private record Attempt(
      List<Either<RowData, RowData>> firstRows,
      List<Either<RowData, RowData>> secondRows,
      OperatorSubtaskState writerAt1,
      OperatorSubtaskState aggregatorAt1,
      OperatorSubtaskState writerAt2,
      OperatorSubtaskState aggregatorAt2,
      OperatorSubtaskState committerAt2) {}

  /**
   * Checkpoint 1: writer 0 of 2 closes a file of day 1, writer 1 one of day 2; committed.
   * Checkpoint 2: writer 0 closes another file of day 1; its committer fails between the manifest's
   * write and the commit.
   */
  private static Attempt failingAttempt(SinkHarnesses s) throws Exception {
    long old = System.currentTimeMillis() - HOUR;
    List<Either<RowData, RowData>> day1 = rows(1, 10, 0, 0, DAY_1, old);
    List<Either<RowData, RowData>> day2 = rows(2, 10, 1, 0, DAY_2, old);
    List<Either<RowData, RowData>> first = new ArrayList<>(day1);
    first.addAll(day2);
    List<Either<RowData, RowData>> second = rows(3, 10, 0, 10, DAY_1, old);
    try (var w0 = s.writer(0, 2);
        var w1 = s.writer(1, 2);
        var aggregator = s.aggregator();
        var committer = s.committer()) {
      w0.open();
      w1.open();
      aggregator.open();
      committer.open();
      feed(w0, day1);
      feed(w1, day2);
      barrier(w0, w1, aggregator, committer, 1);
      OperatorSubtaskState writerAt1 = w0.snapshot(1, 1);
      w1.snapshot(1, 1);
      OperatorSubtaskState aggregatorAt1 = aggregator.snapshot(1, 1);
      committer.snapshot(1, 1);
      committer.notifyOfCompletedCheckpoint(1);

      feed(w0, second);
      barrier(w0, w1, aggregator, committer, 2);
      OperatorSubtaskState writerAt2 = w0.snapshot(2, 2);
      w1.snapshot(2, 2);
      OperatorSubtaskState aggregatorAt2 = aggregator.snapshot(2, 2);
      OperatorSubtaskState committerAt2 = committer.snapshot(2, 2);
      SinkFaults.install(
          point -> {
            if (point == SinkFaults.Point.AFTER_BATCH_MANIFEST) {
              throw new IllegalStateException("injected: after the batch's manifest");
            }
          });
      assertThatThrownBy(() -> committer.notifyOfCompletedCheckpoint(2))
          .hasStackTraceContaining("injected: after the batch's manifest");
      SinkFaults.install(null);
      return new Attempt(
          first, second, writerAt1, aggregatorAt1, writerAt2, aggregatorAt2, committerAt2);
    }
  }

  /** Checkpoint {@code id}'s barrier through both writers, the aggregator and to the committer. */
  private static void barrier(
      org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<
              Either<RowData, RowData>,
              org.apache.flink.streaming.api.connector.sink2.CommittableMessage<
                  org.spatialingest.sink.core.WriterReport>>
          w0,
      org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<
              Either<RowData, RowData>,
              org.apache.flink.streaming.api.connector.sink2.CommittableMessage<
                  org.spatialingest.sink.core.WriterReport>>
          w1,
      org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<
              org.apache.flink.streaming.api.connector.sink2.CommittableMessage<
                  org.spatialingest.sink.core.WriterReport>,
              org.apache.flink.streaming.api.connector.sink2.CommittableMessage<FileBatch>>
          aggregator,
      org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness<
              org.apache.flink.streaming.api.connector.sink2.CommittableMessage<FileBatch>, ?>
          committer,
      long id)
      throws Exception {
    w0.prepareSnapshotPreBarrier(id);
    w1.prepareSnapshotPreBarrier(id);
    forward(w0, aggregator);
    forward(w1, aggregator);
    aggregator.prepareSnapshotPreBarrier(id);
    forward(aggregator, committer);
  }

  /** The data manifests the table's current snapshot added. */
  private static List<ManifestFile> added(Table table) {
    long id = table.currentSnapshot().snapshotId();
    return table.currentSnapshot().dataManifests(table.io()).stream()
        .filter(m -> m.snapshotId() != null && m.snapshotId() == id)
        .toList();
  }

  private static List<DataFile> filesIn(Table table, ManifestFile manifest) throws Exception {
    List<DataFile> files = new ArrayList<>();
    try (ManifestReader<DataFile> reader =
        ManifestFiles.read(manifest, table.io(), table.specs())) {
      reader.forEach(f -> files.add(f.copy()));
    }
    return files;
  }

  /** The data files a scan of event times from {@code dayMillis} on plans. */
  private static List<String> planned(Table table, long dayMillis) throws Exception {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks =
        table
            .newScan()
            .filter(Expressions.greaterThanOrEqual("event_time", (dayMillis - 12 * HOUR) * 1000))
            .planFiles()) {
      tasks.forEach(t -> files.add(t.file().location()));
    }
    return files;
  }

  /** This sink's batch manifests in the table's metadata directory. */
  private static List<Path> batchManifests(SinkHarnesses s, Table table) throws Exception {
    Path metadata = SinkHarnesses.local(table.location()).resolve("metadata");
    try (Stream<Path> files = Files.list(metadata)) {
      return files
          .filter(p -> SinkFileNames.parseBatchManifest(s.scope(), p.toString()) != null)
          .toList();
    }
  }
}
