package org.spatialingest.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The one entry point: {@code flink run -c org.spatialingest.cli.Main <jar> run ...} on a cluster, and
 * {@code java -jar target/spatial-ingest-<v>.jar <command>} locally.
 *
 * <p>Exit codes: 0 success, 1 a check failed (e.g. {@code verify} out of tolerance), 2 usage or configuration error,
 * 3 runtime failure.
 */
@Command(
    name = "spatial-ingest",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Kafka -> Flink -> Iceberg spatial ingest with a byte-and-time bounded sink.",
    subcommands = {
      RunCommand.class,
      DemoCommand.class,
      LabCommand.class,
      PlanCommand.class,
      EstimateTasksCommand.class,
      VerifyCommand.class,
      InspectCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  public static final int EXIT_OK = 0;
  public static final int EXIT_CHECK_FAILED = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_RUNTIME = 3;

  public static void main(String[] args) {
    if (System.getProperty("log4j.configurationFile") == null
        && System.getProperty("log4j2.configurationFile") == null) {
      // launched by `java -jar`, not by Flink (which always names its log configuration)
      System.setProperty("log4j2.configurationFile", "spatial-ingest-local-log4j2.properties");
    }
    System.exit(commandLine().execute(args));
  }

  /** The configured command line, shared by {@link #main} and tests. */
  public static CommandLine commandLine() {
    return new CommandLine(new Main())
        .setExitCodeExceptionMapper(ExitCodes::forException)
        .setExecutionExceptionHandler(ExitCodes::handle);
  }

  @Override
  public void run() {
    commandLine().usage(System.out);
  }
}
