package org.spatialingest.local;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Map;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;

/**
 * The Flink configuration of every local cluster this project starts ({@code run}, {@code demo},
 * {@code lab}), in three layers: the caller's defaults (web UI port, ...); checkpoints in a
 * filesystem directory with savepoints beside them, never in JobManager memory (which refuses task
 * state over 5 MiB: the checkpoint fails and the job fails over in a loop); then the user's {@code
 * --flink} options, which win over both.
 */
public final class LocalFlink {
  private LocalFlink() {}

  /**
   * @param command names the default checkpoint directory, a new {@code
   *     spatial-ingest-<command>-checkpoints-*} folder under {@code java.io.tmpdir}; it is created
   *     only when {@code flinkOptions} name no checkpoint directory
   * @param defaults the caller's own settings, overridden by {@code flinkOptions}
   * @param flinkOptions validated Flink options ({@code --flink KEY=VALUE})
   */
  public static Configuration configuration(
      String command, Configuration defaults, Map<String, String> flinkOptions) throws IOException {
    Configuration user = new Configuration();
    flinkOptions.forEach(user::setString);
    Configuration conf = new Configuration(defaults);
    if (!user.contains(CheckpointingOptions.CHECKPOINT_STORAGE)) {
      conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    }
    String checkpoints =
        user.contains(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
            ? user.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
            : Files.createTempDirectory("spatial-ingest-" + command + "-checkpoints-")
                .toUri()
                .toString();
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints);
    if (!user.contains(CheckpointingOptions.SAVEPOINT_DIRECTORY)) {
      conf.set(
          CheckpointingOptions.SAVEPOINT_DIRECTORY,
          checkpoints.replaceAll("/+$", "") + "/savepoints");
    }
    conf.addAll(user);
    return conf;
  }

  /**
   * Flink's Prometheus reporter (name {@code prom}), as {@code k8s/base/flinkdeployment.yaml}
   * configures it on a cluster; needs {@code flink-metrics-prometheus} on the classpath (the local
   * launcher has it) or in {@code plugins/}.
   */
  public static final String PROMETHEUS_FACTORY =
      "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

  /**
   * {@code conf} with Flink's Prometheus reporter serving every metric of the local cluster on
   * {@code http://localhost:<port>/metrics}.
   */
  public static Configuration withPrometheus(Configuration conf, int port) {
    conf.setString("metrics.reporter.prom.factory.class", PROMETHEUS_FACTORY);
    conf.setString("metrics.reporter.prom.port", Integer.toString(port));
    return conf;
  }

  /**
   * Where a configuration from {@link #configuration} puts checkpoints, for the run's start-up
   * lines.
   */
  public static String describeCheckpoints(Configuration conf) {
    return conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
        + " ("
        + conf.get(CheckpointingOptions.CHECKPOINT_STORAGE)
        + " storage; savepoints in "
        + conf.get(CheckpointingOptions.SAVEPOINT_DIRECTORY)
        + ")";
  }
}
