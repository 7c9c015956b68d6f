package org.spatialingest.sink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * Waiting on a running job's completed checkpoints (the MiniCluster's execution graph), instead of
 * on the clock: a duplicate a test looks for would be committed within a few checkpoints, and a
 * loaded machine slows the checkpoints and the wait alike.
 */
final class JobCheckpoints {
  private JobCheckpoints() {}

  /** Checkpoints {@code job} completed so far. Cost: one look-up of the job's execution graph. */
  static long completed(MiniCluster flink, JobID job) throws Exception {
    return flink
        .getExecutionGraph(job)
        .get()
        .getCheckpointStatsSnapshot()
        .getCounts()
        .getNumberOfCompletedCheckpoints();
  }

  /**
   * Waits until {@code job} has completed {@code more} checkpoints after this call (at most 120 s).
   */
  static void awaitMore(MiniCluster flink, JobID job, int more) throws Exception {
    long target = completed(flink, job) + more;
    long deadline = System.currentTimeMillis() + 120_000;
    while (completed(flink, job) < target) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("job " + job + " did not complete " + more + " more checkpoints");
      }
      Thread.sleep(50);
    }
  }

  /** Waits until {@code job}, just submitted, has completed {@code count} checkpoints (120 s). */
  static void awaitCompleted(MiniCluster flink, JobID job, int count) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (true) {
      try {
        if (completed(flink, job) >= count) {
          return;
        }
      } catch (java.util.concurrent.ExecutionException notScheduledYet) {
        // its execution graph is not there yet
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("job " + job + " did not complete " + count + " checkpoints");
      }
      Thread.sleep(50);
    }
  }
}
