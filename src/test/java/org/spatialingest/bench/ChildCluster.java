package org.spatialingest.bench;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MetricOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;

/**
 * The child's own MiniCluster (one TaskManager, one slot per parallel subtask, as a local
 * environment has) with what the benchmark needs and a plain local environment lacks:
 * <b>file-system checkpoint storage</b> in {@code checkpointDir} (a local environment otherwise
 * keeps checkpoints in JobManager memory and fails any task state over 5 MiB, then restarts), a
 * REST endpoint on a random loopback port, a checkpoint history long enough for a whole run, and
 * metrics fetched as often as its {@link JobMonitor} looks. {@link #environment()} submits to it.
 */
final class ChildCluster implements AutoCloseable {
  private final MiniCluster cluster;
  private final Configuration configuration;
  private final Duration monitorPeriod;

  private ChildCluster(MiniCluster cluster, Configuration configuration, Duration monitorPeriod) {
    this.cluster = cluster;
    this.configuration = configuration;
    this.monitorPeriod = monitorPeriod;
  }

  /**
   * @param monitorPeriod how often its jobs' {@link JobMonitor}s look, and so how often the cluster
   *     fetches metrics ({@link JobMonitor#LIVE_PERIOD} or {@link JobMonitor#THROUGHPUT_PERIOD})
   */
  static ChildCluster start(int slots, Path checkpointDir, Duration monitorPeriod)
      throws Exception {
    Configuration conf = new Configuration();
    conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir.toUri().toString());
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 100_000);
    conf.set(MetricOptions.METRIC_FETCHER_UPDATE_INTERVAL, monitorPeriod);
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(slots)
                .build());
    cluster.start();
    TestStreamEnvironment.setAsContext(cluster, slots);
    return new ChildCluster(cluster, conf, monitorPeriod);
  }

  /** How often its jobs' monitors look: the period it fetches metrics at. */
  Duration monitorPeriod() {
    return monitorPeriod;
  }

  /**
   * An environment that runs on this cluster, with the same checkpoint storage set on the job too.
   */
  StreamExecutionEnvironment environment() {
    return StreamExecutionEnvironment.getExecutionEnvironment(configuration);
  }

  URI restAddress() throws Exception {
    return cluster.getRestAddress().get();
  }

  @Override
  public void close() throws Exception {
    TestStreamEnvironment.unsetAsContext();
    cluster.closeAsync().get(60, TimeUnit.SECONDS);
  }
}
