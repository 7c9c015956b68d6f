package org.spatialingest.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.WebOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Flink configuration of every local cluster this project starts ({@code run}, {@code demo},
 * {@code lab}), in three layers: the caller's defaults (web UI port, ...); checkpoints in a
 * filesystem directory with savepoints beside them, never in JobManager memory (which refuses task
 * state over 5 MiB: the checkpoint fails and the job fails over in a loop); then the user's {@code
 * --flink} options, which win over both.
 *
 * <p>Everything the local cluster writes for one run goes into one new run folder under {@code
 * java.io.tmpdir}, {@code spatial-ingest-<command>-<random>}: the default checkpoint directory
 * ({@code checkpoints/}), Flink's io temp directories ({@code io.tmp.dirs}: the cluster's working
 * directory, blobs, the RPC system's jar) and the web UI's upload folder ({@code web.tmpdir}).
 * {@link #removeRunFolder} deletes it when the run ended normally; a directory the user gave with
 * {@code --flink} is outside it and never deleted.
 */
public final class LocalFlink {
  private static final Logger LOG = LoggerFactory.getLogger(LocalFlink.class);

  /**
   * Where {@link #configuration} put the run folder; ours, not a Flink option ({@code --flink}
   * accepts only Flink's own keys, so a user cannot set it).
   */
  static final ConfigOption<String> RUN_FOLDER =
      ConfigOptions.key("spatial-ingest.local.run-folder").stringType().noDefaultValue();

  private LocalFlink() {}

  /**
   * @param command names the run folder, a new {@code spatial-ingest-<command>-*} folder under
   *     {@code java.io.tmpdir}; the checkpoint directory is its {@code checkpoints/} unless {@code
   *     flinkOptions} name one
   * @param defaults the caller's own settings, overridden by {@code flinkOptions}
   * @param flinkOptions validated Flink options ({@code --flink KEY=VALUE})
   */
  public static Configuration configuration(
      String command, Configuration defaults, Map<String, String> flinkOptions) throws IOException {
    Configuration user = new Configuration();
    flinkOptions.forEach(user::setString);
    Configuration conf = new Configuration(defaults);
    Path runFolder = Files.createTempDirectory("spatial-ingest-" + command + "-").toAbsolutePath();
    conf.set(RUN_FOLDER, runFolder.toString());
    conf.set(CoreOptions.TMP_DIRS, Files.createDirectories(runFolder.resolve("tmp")).toString());
    conf.set(WebOptions.TMP_DIR, Files.createDirectories(runFolder.resolve("web")).toString());
    if (!user.contains(CheckpointingOptions.CHECKPOINT_STORAGE)) {
      conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    }
    String checkpoints =
        user.contains(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
            ? user.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
            : Files.createDirectories(runFolder.resolve("checkpoints")).toUri().toString();
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
    String checkpoints = conf.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
    boolean ours =
        runFolder(conf)
            .map(f -> checkpoints.startsWith(f.resolve("checkpoints").toUri().toString()))
            .orElse(false);
    return checkpoints
        + " ("
        + conf.get(CheckpointingOptions.CHECKPOINT_STORAGE)
        + " storage; savepoints in "
        + conf.get(CheckpointingOptions.SAVEPOINT_DIRECTORY)
        + (ours ? "; deleted when the run ends normally" : "")
        + ")";
  }

  /** The run folder of a configuration from {@link #configuration}; empty for any other. */
  public static Optional<Path> runFolder(ReadableConfig conf) {
    return conf.getOptional(RUN_FOLDER).map(Path::of);
  }

  /**
   * Deletes the run folder of {@code conf} (if it is from {@link #configuration}): call it when the
   * run ended normally, after its job ended. The local cluster shuts down asynchronously after its
   * job (and may still remove or write its own scratch files), so whatever is left or reappears is
   * deleted again when the JVM exits. A failure to delete is logged, never thrown: the run's result
   * stands.
   */
  public static void removeRunFolder(ReadableConfig conf) {
    runFolder(conf)
        .ifPresent(
            folder -> {
              deleteTree(folder);
              Runtime.getRuntime()
                  .addShutdownHook(new Thread(() -> deleteTree(folder), "remove-run-folder"));
              LOG.info("Removed the run folder {} (checkpoints, Flink's scratch files)", folder);
            });
  }

  private static void deleteTree(Path folder) {
    IOException last = null;
    for (int attempt = 1; attempt <= 5 && Files.exists(folder); attempt++) {
      try (Stream<Path> files = Files.walk(folder)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        last = e; // a file created or removed by the cluster's shutdown meanwhile: walk again
      } catch (UncheckedIOException e) {
        last = e.getCause();
      }
    }
    if (Files.exists(folder)) {
      LOG.warn("Could not delete the run folder {}: {}", folder, String.valueOf(last));
    }
  }
}
