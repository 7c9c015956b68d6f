package org.spatialingest.local;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicBoolean;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C (SIGINT) as a stop request instead of a JVM exit, while a local run is being stopped
 * cleanly: the first Ctrl-C only sets the stop flag, so the run catches up and drains on a cluster
 * that is still whole (on a JVM exit, Flink's and Iceberg's own shutdown hooks close task managers
 * and thread pools under the drain and the job restart-loops); a second Ctrl-C exits at once.
 * {@link #close} restores the previous handler.
 */
final class StopSignal implements AutoCloseable {
  private static final Signal INT = new Signal("INT");
  private final SignalHandler previous;

  private StopSignal(SignalHandler previous) {
    this.previous = previous;
  }

  static StopSignal install(AtomicBoolean stop, PrintStream out) {
    return new StopSignal(
        Signal.handle(
            INT,
            signal -> {
              if (stop.compareAndSet(false, true)) {
                out.println(
                    "Ctrl-C: stopping cleanly (catch up, drain, count); Ctrl-C again quits at once, committing "
                        + "nothing more.");
              } else {
                System.exit(130);
              }
            }));
  }

  @Override
  public void close() {
    Signal.handle(INT, previous);
  }
}
