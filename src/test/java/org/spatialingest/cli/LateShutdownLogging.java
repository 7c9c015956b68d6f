package org.spatialingest.cli;

import org.slf4j.LoggerFactory;

/**
 * {@link Main}, plus a shutdown hook that looks up a new logger and logs a second after the JVM
 * began to exit, as Flink's and Kafka's shutdown hooks do. Run in a child JVM by {@link
 * LocalLogFileTest}.
 */
public final class LateShutdownLogging {
  static final String LATE_LINE = "logged by a shutdown hook after the command ended";

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
                  LoggerFactory.getLogger("late-shutdown-hook").info(LATE_LINE);
                },
                "late-shutdown-hook"));
    Main.main(args);
  }
}
