package org.spatialingest.cli;

import org.slf4j.LoggerFactory;

/**
 * {@link Main}, plus a shutdown hook that looks up a new logger and logs a second after the JVM
 * began to exit, as Flink's and Kafka's shutdown hooks do: {@link #LATE_LINE}, followed by the
 * system property {@link #EXTRA_PROPERTY} if set (a library quoting a value). Run in a child JVM by
 * {@link LocalLogFileTest} and {@link SecretsOnScreenTest}.
 */
public final class LateShutdownLogging {
  static final String LATE_LINE = "logged by a shutdown hook after the command ended";

  /** A system property whose value the late line ends with. */
  static final String EXTRA_PROPERTY = "late-line.extra";

  private LateShutdownLogging() {}

  public static void main(String[] args) throws Exception {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    Thread.sleep(1_000);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  LoggerFactory.getLogger("late-shutdown-hook")
                      .info(LATE_LINE + System.getProperty(EXTRA_PROPERTY, ""));
                },
                "late-shutdown-hook"));
    Main.main(args);
  }
}
