package org.spatialingest.cli;

/** Lets tests outside this package run the CLI with captured output. */
public final class CliTestAccess {
  private CliTestAccess() {}

  public record Run(int exitCode, String out, String err) {}

  public static Run run(String... args) {
    CliRun r = CliRun.of(args);
    return new Run(r.exitCode(), r.out(), r.err());
  }
}
