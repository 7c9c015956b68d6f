package org.spatialingest.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one job of a local cluster through its REST API and prints each restart and each failed
 * checkpoint as soon as Flink reports it, with the cause Flink recorded: the job's {@code
 * numRestarts} metric, and the failed checkpoints (latest and recent history) of {@code
 * /jobs/<id>/checkpoints}. A failed checkpoint is one that started (it has an id); Flink's {@code
 * failed} count also counts triggers refused before a checkpoint started (e.g. while tasks are
 * still deploying), which are kept apart as {@link JobHealth#triggersFailed}.
 *
 * <p>Polls once a second on a daemon thread until {@link #close}; {@link #poll} polls at once. A
 * poll that gets no answer is retried at the next tick. Once {@link #stopping} is called (before a
 * drain or a cancel, which decline or abort checkpoints on purpose), later checkpoint failures are
 * no longer counted; restarts still are.
 */
public final class JobHealthMonitor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobHealthMonitor.class);
  private final FlinkRest rest;
  private final String job;
  private final PrintStream out;
  private final String prefix;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "job-health-monitor");
            t.setDaemon(true);
            return t;
          });
  private final Set<Long> failedCheckpointIds = new TreeSet<>();
  private boolean answered;
  private boolean stopping;
  private long restarts;
  private long triggersFailed;
  private long completedCheckpoints;

  private JobHealthMonitor(int restPort, JobID job, PrintStream out, String prefix) {
    this.rest = new FlinkRest(restPort);
    this.job = "/jobs/" + job;
    this.out = out;
    this.prefix = prefix;
  }

  /**
   * Starts watching {@code job} on the cluster whose REST API listens on {@code restPort}; printed
   * lines start with {@code prefix}.
   */
  public static JobHealthMonitor start(int restPort, JobID job, PrintStream out, String prefix) {
    JobHealthMonitor monitor = new JobHealthMonitor(restPort, job, out, prefix);
    monitor.timer.scheduleWithFixedDelay(monitor::poll, 1, 1, TimeUnit.SECONDS);
    return monitor;
  }

  /** Reads the counts now and prints what changed since the last poll. */
  public synchronized void poll() {
    try {
      long nowRestarts = restartCount();
      JsonNode checkpoints = stopping ? null : rest.get(job + "/checkpoints");
      answered = true;
      if (nowRestarts > restarts) {
        out.printf(
            "%s!! the job restarted (%d %s so far): %s%n",
            prefix, nowRestarts, nowRestarts == 1 ? "restart" : "restarts", latestFailure());
        restarts = nowRestarts;
      }
      if (checkpoints != null) {
        JsonNode counts = checkpoints.path("counts");
        completedCheckpoints = counts.path("completed").asLong(completedCheckpoints);
        reportNewFailures(checkpoints);
        triggersFailed =
            Math.max(triggersFailed, counts.path("failed").asLong(0) - failedCheckpointIds.size());
      }
    } catch (IOException e) {
      LOG.debug("Flink REST at {} did not answer", rest.base(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Polls once more, then counts no further checkpoint failures: the job is being drained or
   * cancelled.
   */
  public synchronized void stopping() {
    poll();
    stopping = true;
  }

  /** What was seen so far. */
  public synchronized JobHealth health() {
    return new JobHealth(
        answered, restarts, failedCheckpointIds.size(), completedCheckpoints, triggersFailed);
  }

  /** Stops polling; {@link #health} keeps the last counts. */
  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Prints each checkpoint that failed since the last poll: the latest failure and the failures
   * still in the recent history ({@code web.checkpoints.history}, 10 by default, far more than fail
   * between two polls).
   */
  private void reportNewFailures(JsonNode checkpoints) {
    List<JsonNode> failed = new ArrayList<>();
    JsonNode latest = checkpoints.path("latest").path("failed");
    if (latest.has("id")) {
      failed.add(latest);
    }
    for (JsonNode entry : checkpoints.path("history")) {
      if ("FAILED".equals(entry.path("status").asText())) {
        failed.add(entry);
      }
    }
    failed.sort(Comparator.comparingLong(f -> f.path("id").asLong()));
    for (JsonNode f : failed) {
      if (failedCheckpointIds.add(f.path("id").asLong())) {
        out.printf(
            "%s!! checkpoint %d failed (%d failed so far): %s%n",
            prefix,
            f.path("id").asLong(),
            failedCheckpointIds.size(),
            firstLine(f.path("failure_message").asText("no message")));
      }
    }
  }

  private long restartCount() throws IOException, InterruptedException {
    for (JsonNode metric : rest.get(job + "/metrics?get=numRestarts")) {
      return metric.path("value").asLong(0);
    }
    return 0;
  }

  /** The newest entry of the job's exception history: its first line and innermost cause. */
  private String latestFailure() {
    try {
      JsonNode entries =
          rest.get(job + "/exceptions?maxExceptions=1").path("exceptionHistory").path("entries");
      if (entries.isEmpty()) {
        return "no exception recorded";
      }
      String trace = entries.get(0).path("stacktrace").asText("");
      String cause =
          trace.lines().filter(l -> l.startsWith("Caused by: ")).reduce((a, b) -> b).orElse("");
      return firstLine(trace) + (cause.isEmpty() ? "" : " | " + cause);
    } catch (IOException e) {
      return "cause unknown (" + e.getMessage() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "cause unknown";
    }
  }

  private static String firstLine(String text) {
    return text.lines().findFirst().orElse("");
  }
}
