package org.spatialingest.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.spatialingest.config.ConfigException;
import org.spatialingest.local.LocalFlink;

/**
 * The environment {@code run} submits to: the one {@code flink run} or the Kubernetes Operator
 * provides, or, started by {@code java -jar}, a local cluster configured by {@link LocalFlink}
 * whose checkpoint directory and log file are printed. A class of its own, so that loading {@link
 * RunCommand} (as picocli does for every command) loads no Flink class.
 */
final class RunEnvironment {
  private RunEnvironment() {}

  /**
   * @param flinkOptions validated {@code --flink} options: local runs only, refused under {@code
   *     flink run}
   */
  static StreamExecutionEnvironment create(Map<String, String> flinkOptions, PrintStream out)
      throws IOException {
    if (!StreamExecutionEnvironment.areExplicitEnvironmentsAllowed()) { // flink run, the operator
      if (!flinkOptions.isEmpty()) {
        throw new ConfigException(
            "--flink configures the local cluster of java -jar; under flink run pass "
                + "-D<key>=<value> to flink run instead");
      }
      return StreamExecutionEnvironment.getExecutionEnvironment();
    }
    Configuration conf = LocalFlink.configuration("run", new Configuration(), flinkOptions);
    out.println("Checkpoints: " + LocalFlink.describeCheckpoints(conf));
    LocalLogFile.current().ifPresent(log -> out.println("Logs:        " + log));
    return StreamExecutionEnvironment.createLocalEnvironment(conf);
  }

  /**
   * Called when the run ended normally: a local run deletes its run folder (default checkpoints,
   * Flink's scratch folders; {@link LocalFlink#removeRunFolder}); nothing else.
   */
  static void ended(StreamExecutionEnvironment env) {
    LocalFlink.removeRunFolder(env.getConfiguration());
  }
}
