package org.spatialingest.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.it.ChildJvm;

/**
 * Local clusters checkpoint to a filesystem directory, so task state over 5 MiB checkpoints without
 * a restart; a {@code --flink} option reaches the cluster (forcing JobManager storage brings the
 * failure back); and the health monitor reports the failed checkpoints and the restarts as they
 * happen.
 */
class LocalFlinkTest {
  @Test
  void defaultsToFilesystemCheckpointsInANewRunFolderThatIsRemovedAtTheEnd() throws Exception {
    Configuration conf = LocalFlink.configuration("test", new Configuration(), Map.of());
    assertThat(conf.get(CheckpointingOptions.CHECKPOINT_STORAGE)).isEqualTo("filesystem");
    Path runFolder = LocalFlink.runFolder(conf).orElseThrow();
    assertThat(runFolder)
        .isDirectory()
        .startsWith(Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath());
    assertThat(runFolder.getFileName().toString()).startsWith("spatial-ingest-test-");
    Path dir = Path.of(java.net.URI.create(conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)));
    assertThat(dir).isDirectory().isEqualTo(runFolder.resolve("checkpoints"));
    assertThat(conf.get(CheckpointingOptions.SAVEPOINT_DIRECTORY))
        .isEqualTo(
            conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY).replaceAll("/+$", "")
                + "/savepoints");
    // Flink's scratch folders (working directory, blobs, the RPC jar; web uploads) in the run
    // folder
    assertThat(Path.of(conf.get(CoreOptions.TMP_DIRS))).startsWith(runFolder);
    assertThat(Path.of(conf.get(WebOptions.TMP_DIR))).startsWith(runFolder);
    assertThat(LocalFlink.describeCheckpoints(conf))
        .endsWith("; deleted when the run ends normally)");
    Files.writeString(dir.resolve("a-checkpoint-file"), "state");
    LocalFlink.removeRunFolder(conf);
    assertThat(runFolder).doesNotExist();
  }

  @Test
  void aCheckpointDirectoryTheUserGaveIsNotRemoved(@TempDir Path checkpoints) throws Exception {
    Configuration conf =
        LocalFlink.configuration(
            "test",
            new Configuration(),
            Map.of("execution.checkpointing.dir", checkpoints.toUri().toString()));
    Files.writeString(checkpoints.resolve("a-checkpoint-file"), "state");
    assertThat(LocalFlink.describeCheckpoints(conf)).doesNotContain("deleted");
    Path runFolder = LocalFlink.runFolder(conf).orElseThrow();
    LocalFlink.removeRunFolder(conf);
    assertThat(runFolder).doesNotExist();
    assertThat(checkpoints.resolve("a-checkpoint-file")).hasContent("state");
  }

  @Test
  void stateOverFiveMiBCheckpointsToTheChosenDirectoryWithoutRestarts(@TempDir Path checkpoints)
      throws Exception {
    int port = ChildJvm.freePort();
    Configuration conf =
        LocalFlink.configuration(
            "test",
            restPort(port),
            Map.of("execution.checkpointing.dir", checkpoints.toUri().toString()));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    JobClient job = BigStateJob.start(conf);
    try (JobHealthMonitor monitor =
        JobHealthMonitor.start(port, job.getJobID(), new PrintStream(printed, true), "")) {
      await(
          monitor,
          h -> h.completedCheckpoints() >= 3 || h.failedCheckpoints() > 0 || h.restarts() > 0);
      JobHealth health = monitor.health();
      assertThat(health.healthy()).as(health.describe() + "\n" + printed).isTrue();
      assertThat(health.completedCheckpoints()).isGreaterThanOrEqualTo(3);
      assertThat(printed.toString()).isEmpty();
      Path jobDir = checkpoints.resolve(job.getJobID().toString());
      try (Stream<Path> files = Files.walk(jobDir)) {
        long bytes = files.filter(Files::isRegularFile).mapToLong(LocalFlinkTest::size).sum();
        assertThat(bytes)
            .as("state files under %s", jobDir)
            .isGreaterThanOrEqualTo(BigStateJob.STATE_BYTES);
      }
    } finally {
      cancel(job);
      LocalFlink.removeRunFolder(conf);
    }
  }

  @Test
  void jobManagerStorageGivenByFlinkOptionFailsAndTheMonitorSaysSo(@TempDir Path unused)
      throws Exception {
    int port = ChildJvm.freePort();
    Configuration conf =
        LocalFlink.configuration(
            "test",
            restPort(port),
            Map.of(
                "execution.checkpointing.storage",
                "jobmanager",
                "execution.checkpointing.dir",
                unused.toUri().toString()));
    assertThat(conf.get(CheckpointingOptions.CHECKPOINT_STORAGE)).isEqualTo("jobmanager");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    JobClient job = BigStateJob.start(conf);
    try (JobHealthMonitor monitor =
        JobHealthMonitor.start(port, job.getJobID(), new PrintStream(printed, true), "[t] ")) {
      await(monitor, h -> h.failedCheckpoints() > 0 && h.restarts() > 0);
      // the monitor polls once a second: it may see more than one failure or restart in one poll
      assertThat(printed.toString())
          .containsPattern("\\[t\\] !! checkpoint \\d+ failed \\(\\d+ failed so far\\): ")
          .containsPattern("\\[t\\] !! the job restarted \\(\\d+ restarts? so far\\): ");
    } finally {
      cancel(job);
      LocalFlink.removeRunFolder(conf);
    }
  }

  private static Configuration restPort(int port) {
    Configuration c = new Configuration();
    c.set(RestOptions.PORT, port);
    c.set(RestOptions.BIND_ADDRESS, "localhost");
    return c;
  }

  private static void await(JobHealthMonitor monitor, Predicate<JobHealth> condition)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    while (!condition.test(monitor.health()) && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
    }
  }

  private static void cancel(JobClient job) throws Exception {
    job.cancel().get(60, TimeUnit.SECONDS);
    job.getJobExecutionResult().handle((r, e) -> null).get(60, TimeUnit.SECONDS);
  }

  private static long size(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
