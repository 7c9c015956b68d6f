package org.spatialingest.cli;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;

/**
 * The log file of one local launcher invocation ({@code java -jar spatial-ingest.jar <command>}):
 * {@code <java.io.tmpdir>/spatial-ingest-<command>-<yyyyMMdd-HHmmss>-<pid>.log}. It is chosen
 * before log4j starts and handed to {@code spatial-ingest-local-log4j2.properties} through the
 * system property {@link #PROPERTY}, so no two runs share (or truncate) a file. Not used under
 * {@code flink run}, where Flink names its own log configuration.
 */
final class LocalLogFile {
  /** The system property the local log4j configuration reads the file name from. */
  static final String PROPERTY = "spatial-ingest.log.file";

  private static final String LOG4J_CONFIGURATION = "spatial-ingest-local-log4j2.properties";
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

  private LocalLogFile() {}

  /**
   * True when nobody (Flink, the user) named a log4j configuration: a local launch by {@code java
   * -jar}.
   */
  static boolean launchedLocally() {
    return System.getProperty("log4j.configurationFile") == null
        && System.getProperty("log4j2.configurationFile") == null;
  }

  /**
   * Selects the local log4j configuration and a new log file for {@code command}; returns the file.
   */
  static Path select(String command) {
    Path file =
        Path.of(
                System.getProperty("java.io.tmpdir"),
                "spatial-ingest-"
                    + command
                    + "-"
                    + LocalDateTime.now().format(STAMP)
                    + "-"
                    + ProcessHandle.current().pid()
                    + ".log")
            .toAbsolutePath();
    System.setProperty(PROPERTY, file.toString());
    System.setProperty("log4j2.configurationFile", LOG4J_CONFIGURATION);
    return file;
  }

  /** The log file of this run, if {@link #select} chose one. */
  static Optional<Path> current() {
    return Optional.ofNullable(System.getProperty(PROPERTY)).map(Path::of);
  }
}
