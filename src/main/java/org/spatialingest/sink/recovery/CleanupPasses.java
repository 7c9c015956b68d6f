package org.spatialingest.sink.recovery;

import java.time.Duration;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.TaskManagerOptions;

/**
 * When the sink removes what a failure left behind ({@link OrphanCleaner}), counted from a start or
 * restore: at the first checkpoint that completes, and once more at the first that completes after
 * {@code heartbeat.timeout + task.cancellation.timeout}.
 *
 * <p>Why twice: a task of the failed attempt can outlive the start of the next one. When the
 * JobManager declares a TaskManager lost (missed heartbeats under load, a long GC pause, a network
 * partition) it restarts the job elsewhere at once, while that TaskManager keeps running its tasks
 * until it misses the JobManager's heartbeats itself and cancels them; a task that does not stop
 * within {@code task.cancellation.timeout} makes it kill itself. Until then such a writer may still
 * close a file after the first pass ran, which nothing would ever commit or remove (a reasoned
 * case: the chaos runs' orphans had another cause, see {@link PrefixListing}). After that bound no
 * task of an earlier attempt can write. Cost: one more listing of the sink's staging and data
 * directories per start or restore.
 */
@Internal
public final class CleanupPasses {
  private final long lastPassFromMillis;
  private int passes;

  CleanupPasses(long lastPassFromMillis) {
    this.lastPassFromMillis = lastPassFromMillis;
  }

  /**
   * The passes of a start or restore happening now, with the bound read from the Flink
   * configuration ({@code task.cancellation.timeout} 0, "never kill", counts as its default).
   */
  public static CleanupPasses startingNow(Configuration flink) {
    Duration cancellation = flink.get(TaskManagerOptions.TASK_CANCELLATION_TIMEOUT);
    if (cancellation.isZero()) {
      cancellation = TaskManagerOptions.TASK_CANCELLATION_TIMEOUT.defaultValue();
    }
    Duration bound = flink.get(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT).plus(cancellation);
    return new CleanupPasses(System.currentTimeMillis() + bound.toMillis());
  }

  /** Whether a checkpoint completing at {@code nowMillis} should run a pass. */
  public boolean due(long nowMillis) {
    return passes == 0 || (passes == 1 && nowMillis >= lastPassFromMillis);
  }

  /** A pass ran to its end (a failed one is retried at the next checkpoint). */
  public void passed() {
    passes++;
  }
}
