package org.spatialingest.local;

/**
 * What Flink reported about one job's restarts and checkpoints while it was watched ({@link
 * JobHealthMonitor}).
 *
 * @param watched false when the REST API never answered: nothing is known, so nothing may be
 *     claimed
 * @param failedCheckpoints checkpoints that started and failed
 * @param triggersFailed checkpoint triggers Flink refused before a checkpoint started (tasks not
 *     running yet, ...); they lose no data and are not failures of the job
 */
public record JobHealth(
    boolean watched,
    long restarts,
    long failedCheckpoints,
    long completedCheckpoints,
    long triggersFailed) {
  /** Watched, no restart, no failed checkpoint. */
  public boolean healthy() {
    return watched && restarts == 0 && failedCheckpoints == 0;
  }

  /** e.g. {@code 0 restarts, 0 failed checkpoints (12 completed)}. */
  public String describe() {
    if (!watched) {
      return "restarts and failed checkpoints unknown (the Flink REST API never answered)";
    }
    return restarts
        + (restarts == 1 ? " restart, " : " restarts, ")
        + failedCheckpoints
        + (failedCheckpoints == 1 ? " failed checkpoint" : " failed checkpoints")
        + " ("
        + completedCheckpoints
        + " completed"
        + (triggersFailed == 0
            ? ""
            : ", "
                + triggersFailed
                + (triggersFailed == 1 ? " trigger" : " triggers")
                + " refused before start")
        + ")";
  }
}
