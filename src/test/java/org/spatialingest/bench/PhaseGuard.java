package org.spatialingest.bench;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;

/**
 * Every wait of a measured phase in the child: bounded by a time-out, and cut short as soon as the
 * {@link JobMonitor} reports a restart. Either way the job is cancelled (if still running) and a
 * {@link PhaseFailure} names the phase, what was awaited and why it failed; nothing waits without a
 * bound.
 */
final class PhaseGuard {
  private static final long SLICE_MS = 200;
  private final String phase;
  private final JobClient job;
  private final JobMonitor monitor;

  PhaseGuard(String phase, JobClient job, JobMonitor monitor) {
    this.phase = phase;
    this.job = job;
    this.monitor = monitor;
  }

  /** Waits until the job is RUNNING. */
  void awaitRunning(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (job.getJobStatus().get(30, TimeUnit.SECONDS) != JobStatus.RUNNING) {
      checkMonitor();
      if (System.nanoTime() > deadline) {
        throw fail("the job was not RUNNING within " + timeout + " (phase-timeout)", null);
      }
      Thread.sleep(SLICE_MS);
    }
  }

  /** The value of {@code future} ({@code what} names it in a failure), within {@code timeout}. */
  <T> T await(CompletableFuture<T> future, Duration timeout, String what) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      checkMonitor();
      try {
        return future.get(SLICE_MS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (System.nanoTime() > deadline) {
          throw fail(what + " did not happen within " + timeout + " (phase-timeout)", null);
        }
      } catch (ExecutionException e) {
        checkMonitor(); // a restart explains the failure better than the cancellation it caused
        throw fail(what + " failed: " + e.getCause(), e.getCause());
      }
    }
  }

  /**
   * Checks {@code condition} every {@code periodMs} until it holds (true) or {@code timeout} has
   * passed (false); a restart of the job fails the phase as in {@link #await}.
   */
  boolean poll(java.util.concurrent.Callable<Boolean> condition, Duration timeout, long periodMs)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      checkMonitor();
      if (condition.call()) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(periodMs);
    }
  }

  /** Cancels the job (a compacting job's maintenance source never ends) and waits for its end. */
  void cancel() throws Exception {
    job.cancel().get(60, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!job.getJobStatus().get(30, TimeUnit.SECONDS).isGloballyTerminalState()) {
      if (System.nanoTime() > deadline) {
        throw new PhaseFailure(phase + ": the cancelled job did not end within 60 s", null);
      }
      Thread.sleep(SLICE_MS);
    }
  }

  private void checkMonitor() throws PhaseFailure {
    if (monitor.failure() != null) {
      throw fail(monitor.failure(), null);
    }
  }

  private PhaseFailure fail(String why, Throwable cause) {
    try {
      if (!job.getJobStatus().get(30, TimeUnit.SECONDS).isGloballyTerminalState()) {
        job.cancel().get(60, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!job.getJobStatus().get(30, TimeUnit.SECONDS).isGloballyTerminalState()
            && System.nanoTime() < deadline) {
          Thread.sleep(SLICE_MS);
        }
      }
    } catch (Exception e) {
      why += " (and cancelling the job failed: " + e + ")";
    }
    return new PhaseFailure(phase + ": " + why, cause);
  }
}
