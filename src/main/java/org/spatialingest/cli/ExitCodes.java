package org.spatialingest.cli;

import org.spatialingest.config.ConfigException;
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

  static int handle(Exception e, CommandLine cmd, ParseResult parseResult) {
    if (isUsage(e)) {
      cmd.getErr().println("error: " + e.getMessage());
      return Main.EXIT_USAGE;
    }
    e.printStackTrace(cmd.getErr());
    return Main.EXIT_RUNTIME;
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
