package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The clean-up after a start never deletes a file that a ref still reaches (issue #56 item 3): the
 * table rolled back under the sink, a branch kept at the rolled-away head, then a start without
 * state, whose orphan clean-up runs at its first checkpoints. Every data file of every ref (main,
 * the branch, the sink's tag) must still be there, and main must end with every record once.
 */
class CleanupKeepsRefsTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);
  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final PositionsJobs jobs = new PositionsJobs(kafka, "refs-");

  @Test
  void aRollbackAndABranchKeepEveryFileTheyReach(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    String topic = jobs.topic(2);
    JobConfig config = jobs.config(topic, dir, Map.of());
    MixedInput a = MixedInput.of("a", 200, 7, 0);
    MixedInput b = MixedInput.of("b", 150, 7, 0);
    TestKit.produceValues(kafka.bootstrapServers(), topic, a.values());
    JobClient first = PositionsJobs.start(config, null, new Configuration());
    Table table = TestKit.table(config);
    PositionsJobs.awaitRows(table, a.rows().size());
    TestKit.produceValues(kafka.bootstrapServers(), topic, b.values());
    PositionsJobs.awaitRows(table, a.rows().size() + b.rows().size());
    TestKit.cancelAndWait(first);

    table.refresh();
    List<Snapshot> sinkCommits = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      if (s.summary().containsKey(SnapshotSummaryKeys.BATCH_ID)) {
        sinkCommits.add(s);
      }
    }
    assertThat(sinkCommits).as("commits to roll back across").hasSizeGreaterThanOrEqualTo(2);
    table.manageSnapshots().createBranch("audit", table.currentSnapshot().snapshotId()).commit();
    table.manageSnapshots().rollbackTo(sinkCommits.get(0).snapshotId()).commit();
    List<String> reachable = reachableFiles(table);

    JobClient second = PositionsJobs.start(config, null, new Configuration());
    PositionsJobs.awaitRows(table, a.rows().size() + b.rows().size());
    // both clean-up passes: the first checkpoint after the start, and once no earlier task writes
    JobCheckpoints.awaitMore(flink, second.getJobID(), 8);
    TestKit.cancelAndWait(second);

    assertThat(reachable).as("files a ref reached before the start").isNotEmpty();
    assertThat(reachable)
        .as("every file a ref reached before the start is still there")
        .allSatisfy(f -> assertThat(Files.exists(Path.of(java.net.URI.create(f)))).isTrue());
    assertThat(reachableFiles(table))
        .as("every file every ref reaches now")
        .allSatisfy(f -> assertThat(Files.exists(Path.of(java.net.URI.create(f)))).isTrue());
    assertThat(TestKit.distinctIds(TestKit.rows(table))).isEqualTo(a.plus(b).rows());
  }

  /** The data files of every ref's snapshot (main, branches, tags). */
  private static List<String> reachableFiles(Table table) throws Exception {
    table.refresh();
    List<String> files = new ArrayList<>();
    for (Map.Entry<String, SnapshotRef> ref : table.refs().entrySet()) {
      try (CloseableIterable<FileScanTask> tasks =
          table.newScan().useSnapshot(ref.getValue().snapshotId()).planFiles()) {
        for (FileScanTask t : tasks) {
          String location = t.file().location();
          files.add(location.startsWith("file:") ? location : "file://" + location);
        }
      }
    }
    return files;
  }
}
