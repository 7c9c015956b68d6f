package org.spatialingest.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Optional;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.Secrets;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * Maps failures to the documented exit codes and prints configuration errors without a stack trace.
 */
final class ExitCodes {
  private ExitCodes() {}

  static int forException(Throwable t) {
    return isUsage(t) ? Main.EXIT_USAGE : Main.EXIT_RUNTIME;
  }

  /**
   * Configuration errors, Kafka access failures and refused positions print one line (without stack
   * trace); other failures their stack trace. Every text passes {@link Secrets#scrub}: a library's
   * message may quote a credential.
   */
  static int handle(Exception e, CommandLine cmd, ParseResult parseResult) {
    if (isUsage(e)) {
      cmd.getErr().println("error: " + Secrets.scrub(e.getMessage()));
      return Main.EXIT_USAGE;
    }
    Optional<String> access = kafkaAccessFailure(e);
    if (access.isPresent()) {
      cmd.getErr().println("error: " + access.get());
      return Main.EXIT_RUNTIME;
    }
    StringWriter trace = new StringWriter();
    e.printStackTrace(new PrintWriter(trace));
    cmd.getErr().print(Secrets.scrub(trace.toString()));
    return Main.EXIT_RUNTIME;
  }

  /**
   * The one-line message of a Kafka access failure, or of positions that refused the start or
   * stopped the job (issue #34), in {@code t}'s causes (the start-up check's, or the one that
   * stopped a running job), found by class name: the CLI loads no Kafka class for commands that do
   * not use it.
   */
  static Optional<String> kafkaAccessFailure(Throwable t) {
    for (Throwable c = t; c != null && c.getCause() != c; c = c.getCause()) {
      for (Class<?> k = c.getClass(); k != null; k = k.getSuperclass()) {
        if (k.getName().equals("org.spatialingest.source.KafkaAccessException")
            || k.getName().equals("org.spatialingest.table.PositionsRefusedException")) {
          return Optional.of(Secrets.scrub(c.getMessage()));
        }
      }
    }
    return Optional.empty();
  }

  private static boolean isUsage(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConfigException || c instanceof CommandLine.ParameterException) {
        return true;
      }
    }
    return false;
  }
}
