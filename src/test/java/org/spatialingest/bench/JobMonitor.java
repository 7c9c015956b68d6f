package org.spatialingest.bench;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the child's one job through {@link JobRest} every period while it runs:
 *
 * <ul>
 *   <li>a restart ({@code numRestarts} > 0) makes {@link #failure()} non-null, with the first
 *       failure's cause: a measured phase must not contain a restart (its figures would mix two
 *       runs), so the caller fails the run;
 *   <li>each time {@code lastCompletedCheckpointId} moves, it records the sink's cumulative staged
 *       bytes (the writer counter {@value #STAGED_METRIC}, summed over subtasks) under that
 *       checkpoint id: bytes the sink writes to its staging area at a barrier belong to the last
 *       checkpoint completed when they are first seen. Absent metric (IcebergSink, or our sink
 *       before it has the counter): nothing recorded, {@link #stagedMetricSeen()} false.
 * </ul>
 *
 * REST metrics lag by up to {@code metrics.fetcher.update-interval}, which {@link ChildCluster}
 * sets to the same period. A daemon thread.
 */
final class JobMonitor implements AutoCloseable {
  static final String STAGED_METRIC = "spatialSink.stagedBytes";

  /**
   * The live phase's period: a fifth of C, so that staged bytes are seen under the checkpoint they
   * belong to.
   */
  static final Duration LIVE_PERIOD = Duration.ofMillis(200);

  /**
   * The throughput phase's period: each look makes the cluster dump every metric of the job
   * (histogram quantiles included), a cost per second that a slower variant pays on more of its
   * rows; at 200 ms it was ~10 % of our sink's samples on points (JFR, benchmarks.md). Its backlog
   * is older than L, so nothing is staged to attribute.
   */
  static final Duration THROUGHPUT_PERIOD = Duration.ofSeconds(1);

  /** How long a restart's message waits for the exception history, and how often it looks. */
  private static final long HISTORY_WAIT_MS = 3_000;

  private static final long HISTORY_POLL_MS = 500;
  private static final Logger LOG = LoggerFactory.getLogger(JobMonitor.class);

  private final long periodMs;
  private final JobRest rest;
  private final Thread thread;
  private final TreeMap<Long, Long> stagedByCheckpoint = new TreeMap<>();
  private volatile String failure;
  private volatile boolean running = true;
  private volatile long restarts;
  private boolean stagedSeen;
  private long lastCheckpoint = -1;

  JobMonitor(JobRest rest, Duration period) {
    this.rest = rest;
    this.periodMs = period.toMillis();
    this.thread = new Thread(this::loop, "bench-job-monitor");
    thread.setDaemon(true);
    thread.start();
  }

  /** Why the phase is invalid (a restart happened), or null. */
  String failure() {
    return failure;
  }

  long restarts() {
    return restarts;
  }

  /** Cumulative staged bytes by the checkpoint id last completed when sampled, ascending. */
  synchronized Map<Long, Long> stagedByCheckpoint() {
    return new TreeMap<>(stagedByCheckpoint);
  }

  synchronized boolean stagedMetricSeen() {
    return stagedSeen;
  }

  /**
   * Stops watching, then takes one last look at the job's exception history (served for finished
   * jobs too, unlike its metrics), so a failure just before the end still invalidates the phase.
   */
  @Override
  public void close() throws Exception {
    running = false;
    thread.interrupt();
    thread.join(30_000);
    if (failure == null && rest.failureCount() > 0) {
      failure =
          "the job failed "
              + rest.failureCount()
              + " time(s) inside the measured phase; first failure: "
              + rest.firstFailure();
      LOG.error("BENCH PHASE INVALID: {}", failure);
    }
  }

  private void loop() {
    while (running) {
      sample();
      try {
        Thread.sleep(periodMs);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * The first failure, waiting up to {@link #HISTORY_WAIT_MS} for the exception history (a preset
   * run once saw {@code numRestarts} = 1 with an empty history), with the checkpoint counts, which
   * say whether failed checkpoints came first.
   */
  private String firstFailure() throws Exception {
    for (long waited = 0;
        waited < HISTORY_WAIT_MS && rest.failureCount() == 0;
        waited += HISTORY_POLL_MS) {
      Thread.sleep(HISTORY_POLL_MS);
    }
    return rest.firstFailure() + "; checkpoints " + rest.checkpoints().path("counts");
  }

  private void sample() {
    try {
      OptionalLong n = rest.jobMetric("numRestarts");
      if (n.isPresent() && n.getAsLong() > 0 && failure == null) {
        restarts = n.getAsLong();
        failure =
            "the job restarted "
                + restarts
                + " time(s) inside the measured phase; first failure: "
                + firstFailure();
        LOG.error("BENCH PHASE INVALID: {}", failure);
      }
      OptionalLong checkpoint = rest.jobMetric("lastCompletedCheckpointId");
      if (checkpoint.isPresent() && checkpoint.getAsLong() > lastCheckpoint) {
        lastCheckpoint = checkpoint.getAsLong();
        OptionalLong staged = rest.operatorMetricSum("." + STAGED_METRIC);
        synchronized (this) {
          stagedSeen |= staged.isPresent();
          stagedByCheckpoint.put(lastCheckpoint, staged.orElse(0));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "job monitor: {}", e.toString()); // the job may be ending; the next sample tries again
    }
  }
}
