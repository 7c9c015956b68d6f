package org.spatialingest.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs {@link Main#commandLine()} with captured stdout and stderr. */
public record CliRun(int exitCode, String out, String err) {
  public static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute(args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
