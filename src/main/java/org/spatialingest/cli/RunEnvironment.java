package org.spatialingest.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.Secrets;
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
   * Where Flink keeps an application-mode job's program arguments (the operator's {@code
   * FlinkDeployment}, {@code flink run-application}): in its configuration, set before {@code main}
   * runs.
   */
  static final String APPLICATION_ARGUMENTS_KEY = "$internal.application.program-args";

  /**
   * @param flinkOptions validated {@code --flink} options: local runs only, refused under {@code
   *     flink run}
   * @param overrides the {@code --set key=value} arguments
   */
  static StreamExecutionEnvironment create(
      Map<String, String> flinkOptions, List<String> overrides, PrintStream out)
      throws IOException {
    if (!StreamExecutionEnvironment.areExplicitEnvironmentsAllowed()) { // flink run, the operator
      if (!flinkOptions.isEmpty()) {
        throw new ConfigException(
            "--flink configures the local cluster of java -jar; under flink run pass "
                + "-D<key>=<value> to flink run instead");
      }
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      refuseSecretArguments(env.getConfiguration(), overrides);
      return env;
    }
    Configuration conf = LocalFlink.configuration("run", new Configuration(), flinkOptions);
    out.println("Checkpoints: " + LocalFlink.describeCheckpoints(conf));
    LocalLogFile.current().ifPresent(log -> out.println("Logs:        " + log));
    return StreamExecutionEnvironment.createLocalEnvironment(conf);
  }

  /**
   * Refuses an application-mode job whose {@code --set} arguments carry a secret value (a key
   * {@link Secrets#isSecretKey} names, or a password inside a value) instead of a reference ({@code
   * ${env:VAR}}, {@code ${file:...}}): Flink keeps program arguments in its configuration under a
   * key it does not mask, so its REST API ({@code /jobmanager/config}) and the JobManager's log
   * show them. The value has reached both before {@code main} runs; refusing makes the job fail
   * before it reads or commits anything, and the message says to rotate the secret.
   *
   * @throws ConfigException naming each such key (its value masked) and the ways to pass it
   */
  static void refuseSecretArguments(ReadableConfig flink, List<String> overrides) {
    if (!flink.toMap().containsKey(APPLICATION_ARGUMENTS_KEY)) {
      return; // flink run: arguments stay in the client's JVM; a local run prints them masked
    }
    List<String> given = new ArrayList<>();
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String key = override.substring(0, eq).trim();
      String value = override.substring(eq + 1);
      if (!value.contains("${") && !Secrets.display(key, value).equals(value)) {
        given.add("--set " + key + "=" + Secrets.MASK);
      }
    }
    if (!given.isEmpty()) {
      throw new ConfigException(
          "Refusing to start: "
              + String.join(", ", given)
              + " passes a secret as a program argument of an application-mode job (FlinkDeployment, "
              + "flink run-application). Flink keeps program arguments in its configuration ("
              + APPLICATION_ARGUMENTS_KEY
              + "), which its REST API and the JobManager's log show unmasked: rotate that secret. "
              + "Pass it instead from the environment (a Kubernetes Secret as an environment variable, "
              + "${env:VAR} in the value: Kafka's EnvVarConfigProvider, see k8s/README.md) or from a "
              + "mounted file (--config with the job YAML in a Secret)");
    }
  }

  /**
   * Called when the run ended normally: a local run deletes its run folder (default checkpoints,
   * Flink's scratch folders; {@link LocalFlink#removeRunFolder}); nothing else.
   */
  static void ended(StreamExecutionEnvironment env) {
    LocalFlink.removeRunFolder(env.getConfiguration());
  }
}
