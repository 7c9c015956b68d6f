package org.spatialingest.cli;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.Secrets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The one entry point: {@code flink run -c org.spatialingest.cli.Main <jar> run ...} on a cluster,
 * and {@code java -jar target/spatial-ingest.jar <command>} locally.
 *
 * <p>Exit codes: 0 success, 1 a check failed (e.g. {@code verify} out of tolerance), 2 usage or
 * configuration error, 3 runtime failure.
 *
 * <p>Launched by {@code java -jar}, every invocation logs to its own file ({@link LocalLogFile});
 * the first and the last line of that file are written here, around the command.
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
    Optional<String> command = subcommandOf(args);
    if (LocalLogFile.launchedLocally()) {
      LocalLogFile.select(command.orElse("cli"));
    }
    // no logger before this point: log4j reads the log file name when it starts
    Logger log = LoggerFactory.getLogger(Main.class);
    command.ifPresent(
        c ->
            log.info(
                "spatial-ingest {} started: {}",
                c,
                String.join(" ", Secrets.displayArguments(List.of(args)))));
    int exitCode = commandLine().execute(args);
    command.ifPresent(c -> log.info("spatial-ingest {} ended with exit code {}", c, exitCode));
    System.exit(exitCode);
  }

  /**
   * The subcommand named on the command line (none for a help or version request), read from the
   * {@code @Command} annotations only: nothing is constructed (and so nothing logs) before the log
   * file is chosen.
   */
  static Optional<String> subcommandOf(String[] args) {
    Class<?>[] subcommands = Main.class.getAnnotation(Command.class).subcommands();
    if (Arrays.stream(args).anyMatch(a -> List.of("-h", "--help", "-V", "--version").contains(a))) {
      return Optional.empty(); // prints usage or version only: nothing to log
    }
    return Arrays.stream(args)
        .filter(a -> !a.startsWith("-"))
        .findFirst()
        .filter(
            first ->
                Arrays.stream(subcommands)
                    .anyMatch(c -> first.equals(c.getAnnotation(Command.class).name())));
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
