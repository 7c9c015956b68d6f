package org.spatialingest.chaos;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.spatialingest.it.StandaloneFlinkCluster;

/**
 * When each checkpoint of the run's jobs was triggered, read from Flink's REST API (its checkpoint
 * history) by a daemon thread every second. A commit's rows are those whose files closed at that
 * checkpoint's barriers: the trigger time is when the sink decided, and what follows it (the
 * checkpoint completing, the commit) is the checkpoint's own time, which {@link ChaosCheck} reports
 * apart from the sink's bound.
 */
final class CheckpointTriggers implements AutoCloseable {
  /** checkpoints kept in Flink's REST history (Flink's default 10 is 20 s at C = 2 s) */
  static final int HISTORY = 100;

  private final StandaloneFlinkCluster cluster;
  private final Set<String> jobs = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> triggers = new ConcurrentHashMap<>();
  private final Thread poller;
  private volatile boolean closed;

  CheckpointTriggers(StandaloneFlinkCluster cluster) {
    this.cluster = cluster;
    this.poller = new Thread(this::pollUntilClosed, "chaos-checkpoint-triggers");
    poller.setDaemon(true);
    poller.start();
  }

  /** Follows the checkpoints of {@code jobId} from now on. */
  void follow(String jobId) {
    jobs.add(jobId);
  }

  /** When checkpoint {@code checkpointId} of {@code jobId} was triggered, or {@code null}. */
  Long triggeredAt(String jobId, long checkpointId) {
    return triggers.get(jobId + "/" + checkpointId);
  }

  private void pollUntilClosed() {
    while (!closed) {
      for (String job : jobs) {
        try {
          for (var cp : cluster.get("/jobs/" + job + "/checkpoints").path("history")) {
            triggers.putIfAbsent(
                job + "/" + cp.path("id").asLong(), cp.path("trigger_timestamp").asLong());
          }
        } catch (Exception e) {
          // the job is restarting, or ended: its history is read again next time
        }
      }
      try {
        Thread.sleep(1_000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    poller.interrupt();
  }
}
