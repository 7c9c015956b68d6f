package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinator;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.operators.coordination.RecreateOnResetOperatorCoordinator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sizing.SizingBounds;

/**
 * Merges the placement subtasks' key samples and byte rates per partition and sends one set of
 * range boundaries to every subtask, so all of them cut the same ranges and a writer's file covers
 * one compact run of keys, whatever each subtask happens to read (Kafka keyed by vehicle, each
 * source subtask reading another area).
 *
 * <p>Rounds: each subtask reports at every checkpoint ({@code snapshotState}); a round is merged
 * when every subtask has reported, or when a later round begins. After a start the first merge does
 * not wait for a checkpoint: a subtask announces its first row of the ranged table ({@link
 * RangeEvents.Request} with {@code firstRows}) and sends an early report (round 0) after {@link
 * StartupTimings#EARLY_REPORT_ROWS} rows or {@link StartupTimings#EARLY_REPORT_MILLIS}; round 0 is
 * merged when every subtask has sent it, or {@link StartupTimings#EARLY_MERGE_WAIT_MILLIS} after
 * the first announcement (the subtask's side: {@link StartupHold}); the checkpoint rounds before it
 * are folded in but send nothing, so the first boundaries come from about a second of every
 * subtask's rows. While the early merge is pending, the coordinator's checkpoint waits for it: the
 * boundaries it sends reach the subtasks before that checkpoint's barrier, so the rows they hold
 * leave by the global ranges and not by each subtask's own keys (with a checkpoint interval shorter
 * than the early merge takes, that fallback sent every subtask's area to every writer). If no
 * subtask announces rows within {@link StartupTimings#ANNOUNCE_WAIT_MILLIS} of the first one
 * opening, the early round ends empty and the checkpoint goes on; a later first row opens it again.
 * So the first checkpoint after a start without ranges comes at most about 3 s late; after a
 * restore with ranges nothing waits.
 *
 * <p>A bounded file input starts otherwise: the {@link Provider} carries {@link StartingStatistics}
 * from a sample of the whole input read where the job was built, so the coordinator has ranges from
 * its start, as after a restore: every subtask gets them when it opens, no early round runs, no
 * checkpoint waits, and the checkpoints' merges refine them as usual.
 *
 * <p>Its checkpoint is the merged statistics ({@link RangeStatisticsSerializer}), so a restart or a
 * rescale starts from the last boundaries (recut for the new writer count), not from one range.
 * Everything runs on one thread of its own.
 */
final class RangeCoordinator implements OperatorCoordinator {
  private static final Logger LOG = LoggerFactory.getLogger(RangeCoordinator.class);

  private final String operatorName;
  private final Context context;
  private final RangeStatisticsSerializer checkpointSerializer;
  private final GlobalRangesSerializer rangesSerializer = new GlobalRangesSerializer();
  private final SubtaskReportSerializer reportSerializer = new SubtaskReportSerializer();
  private final Map<Integer, SubtaskGateway> gateways = new HashMap<>();
  private final Map<Integer, SubtaskReport> reports = new HashMap<>();
  private final Map<Integer, SubtaskReport> early = new HashMap<>();
  private RangeStatistics statistics;

  /** Merges since this coordinator started (a restore starts a new coordinator). */
  private long mergesSinceStart;

  private GlobalRanges current;
  private long round = -1;
  private boolean roundMerged;

  /** from the start until the early merge (or until no subtask announced rows in time) */
  private boolean earlyPending = true;

  private boolean openTimerStarted;
  private boolean earlyAnnounced;

  /** checkpoints taken while the early merge was due, completed by it */
  private final List<CompletableFuture<byte[]>> awaitingEarlyMerge = new ArrayList<>();

  private ScheduledExecutorService executor;

  RangeCoordinator(
      String operatorName,
      Context context,
      RangeStatistics initial,
      RangeStatisticsSerializer checkpointSerializer) {
    this.operatorName = operatorName;
    this.context = context;
    this.statistics = initial;
    this.checkpointSerializer = checkpointSerializer;
    // a bounded input's sample (Provider): ranges from the first row, as after a restore
    current = initial.hasKeys() ? initial.ranges(0) : null;
    earlyPending = current == null;
  }

  @Override
  public void start() {
    ClassLoader loader = context.getUserCodeClassloader();
    executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "range-coordinator " + operatorName);
              t.setContextClassLoader(loader);
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  /** Runs on the coordinator's thread; a failure there fails the job (it is a bug, not input). */
  private void run(String what, ThrowingRunnable action) {
    executor.execute(
        () -> {
          try {
            action.run();
          } catch (Throwable t) {
            LOG.error("range coordinator {} failed while {}", operatorName, what, t);
            context.failJob(t);
          }
        });
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Override
  public void handleEventFromOperator(int subtask, int attemptNumber, OperatorEvent event) {
    run(
        "handling " + event.getClass().getSimpleName() + " from subtask " + subtask,
        () -> {
          if (event instanceof RangeEvents.Request request) {
            if (request.firstRows()) {
              announce();
            } else {
              opened();
              if (current != null) {
                send(gateways.get(subtask), current);
              }
            }
          } else if (event instanceof RangeEvents.Report report) {
            accept(subtask, reportSerializer.deserialize(report.version(), report.bytes()));
          } else if (event instanceof RangeEvents.Finished) {
            SubtaskGateway gateway = gateways.get(subtask);
            if (gateway != null && gateway.getExecution().getAttemptNumber() == attemptNumber) {
              gateways.remove(subtask);
            }
          } else {
            throw new IllegalArgumentException("unexpected event " + event);
          }
        });
  }

  /**
   * A subtask opened: if none announces rows within {@link StartupTimings#ANNOUNCE_WAIT_MILLIS},
   * there is nothing to merge early and checkpoints go on as usual.
   */
  private void opened() {
    if (!earlyPending || openTimerStarted) {
      return;
    }
    openTimerStarted = true;
    executor.schedule(
        () ->
            run(
                "ending the early round",
                () -> {
                  if (!earlyAnnounced) {
                    mergeEarlyRound();
                  }
                }),
        StartupTimings.ANNOUNCE_WAIT_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  /**
   * A subtask has its first rows. With no ranges yet, an early round is pending (again, if rows
   * came only after the first one ended empty) until every subtask reported or {@link
   * StartupTimings#EARLY_MERGE_WAIT_MILLIS}.
   */
  private void announce() {
    if (current != null) {
      return;
    }
    if (!earlyPending) {
      earlyPending = true;
      earlyAnnounced = false;
      early.clear();
    }
    if (earlyAnnounced) {
      return;
    }
    earlyAnnounced = true;
    executor.schedule(
        () -> run("the early merge", this::mergeEarlyRound),
        StartupTimings.EARLY_MERGE_WAIT_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  private void mergeEarlyRound() throws IOException {
    if (!earlyPending) {
      return;
    }
    earlyPending = false;
    if (!early.isEmpty()) {
      merge(0, early);
    } else {
      publish(0, 0); // checkpoint rounds before it may have brought keys
    }
    for (CompletableFuture<byte[]> checkpoint : awaitingEarlyMerge) {
      checkpoint.complete(snapshot());
    }
    awaitingEarlyMerge.clear();
  }

  private void accept(int subtask, SubtaskReport report) throws IOException {
    if (report.round() == 0) {
      if (!earlyPending) {
        LOG.debug("subtask {}'s early report came after the early merge", subtask);
        return;
      }
      early.put(subtask, report);
      if (early.size() >= context.currentParallelism()) {
        mergeEarlyRound();
      }
      return;
    }
    if (report.round() < round) {
      LOG.debug("dropping subtask {}'s report of round {} (at {})", subtask, report.round(), round);
      return;
    }
    if (report.round() > round) {
      if (!roundMerged && !reports.isEmpty()) {
        merge(round, reports);
      }
      round = report.round();
      reports.clear();
      roundMerged = false;
    }
    reports.put(subtask, report);
    if (!roundMerged && reports.size() >= context.currentParallelism()) {
      merge(round, reports);
      roundMerged = true;
    }
  }

  private void merge(long mergedRound, Map<Integer, SubtaskReport> reports) throws IOException {
    statistics.merge(reports.values(), System.currentTimeMillis());
    if (earlyPending && mergedRound != 0) {
      // a checkpoint round before the early merge: folded in, but the first boundaries wait for
      // the early merge, which then sees more than one interval's rows (a first cut from the
      // first 300 ms weighed the areas by 2x and more; its cuts then moved, and every writer's
      // open file spanned two generations of them)
      return;
    }
    publish(mergedRound, reports.size());
  }

  /** Cuts and sends the ranges of the statistics merged so far, if they have keys. */
  private void publish(long mergedRound, int reported) throws IOException {
    if (!statistics.hasKeys()) {
      return; // nothing to cut yet: the subtasks keep holding or their fallback
    }
    current = statistics.ranges(mergedRound);
    if (LOG.isDebugEnabled()) {
      for (GlobalRanges.TableRanges t : current.tables()) {
        t.partitions()
            .forEach(
                (path, p) ->
                    LOG.debug(
                        "{}: round {} partition {}: {} ranges, boundaries {}",
                        operatorName,
                        mergedRound,
                        path,
                        p.ranges(),
                        java.util.Arrays.toString(p.boundaries())));
      }
    }
    // one merge per checkpoint: only the first after a start is worth a line at INFO
    boolean firstSinceStart = ++mergesSinceStart == 1;
    String message = "range coordinator {}: round {} merged from {} of {} subtasks";
    if (firstSinceStart || LOG.isDebugEnabled()) {
      Object[] args = {operatorName, mergedRound, reported, context.currentParallelism()};
      if (firstSinceStart) {
        LOG.info(message, args);
      } else {
        LOG.debug(message, args);
      }
    }
    for (SubtaskGateway gateway : gateways.values()) {
      send(gateway, current);
    }
  }

  private void send(SubtaskGateway gateway, GlobalRanges ranges) throws IOException {
    if (gateway == null) {
      return;
    }
    // a lost event is harmless: a restarted subtask asks again when it opens
    gateway.sendEvent(
        new RangeEvents.Ranges(GlobalRangesSerializer.VERSION, rangesSerializer.serialize(ranges)));
  }

  private byte[] snapshot() throws IOException {
    return SimpleVersionedSerialization.writeVersionAndSerialize(checkpointSerializer, statistics);
  }

  @Override
  public void checkpointCoordinator(long checkpointId, CompletableFuture<byte[]> result) {
    run(
        "taking checkpoint " + checkpointId,
        () -> {
          // waits for the early merge while it is pending (at most ANNOUNCE_WAIT_MILLIS after the
          // first subtask opened, or EARLY_MERGE_WAIT_MILLIS after the first rows): a checkpoint
          // taken
          // just before the first rows came let their barrier release them by each subtask's own
          // keys (a cold start of the keyed benchmark at 8 writers: every file spanned all areas)
          if (earlyPending) {
            awaitingEarlyMerge.add(result);
          } else {
            result.complete(snapshot());
          }
        });
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) {}

  @Override
  public void resetToCheckpoint(long checkpointId, byte[] checkpointData) throws IOException {
    if (checkpointData == null || checkpointData.length == 0) {
      return;
    }
    statistics =
        SimpleVersionedSerialization.readVersionAndDeSerialize(
            checkpointSerializer, checkpointData);
    current = statistics.hasKeys() ? statistics.ranges(0) : null;
    // the subtasks get the restored ranges when they open: nothing to wait for
    earlyPending = current == null;
    LOG.info(
        "range coordinator {}: restored the ranges of checkpoint {}", operatorName, checkpointId);
  }

  @Override
  public void subtaskReset(int subtask, long checkpointId) {}

  @Override
  public void executionAttemptFailed(int subtask, int attemptNumber, Throwable reason) {
    run(
        "forgetting subtask " + subtask,
        () -> {
          SubtaskGateway gateway = gateways.get(subtask);
          if (gateway != null && gateway.getExecution().getAttemptNumber() == attemptNumber) {
            gateways.remove(subtask);
          }
        });
  }

  @Override
  public void executionAttemptReady(int subtask, int attemptNumber, SubtaskGateway gateway) {
    run("registering subtask " + subtask, () -> gateways.put(subtask, gateway));
  }

  /** Creates the coordinator (anew after a global failover, then reset to the checkpoint). */
  static final class Provider extends RecreateOnResetOperatorCoordinator.Provider {
    private static final long serialVersionUID = 1L;
    private final String operatorName;
    private final SizingBounds bounds;
    private final int writers;
    private final int maxOpenPartitions;
    private final double seedRatio;

    /** {@link StartingStatistics} of a bounded input, versioned, or null */
    private final byte[] starting;

    Provider(
        String operatorName,
        OperatorID operatorId,
        SizingBounds bounds,
        int writers,
        int maxOpenPartitions,
        double seedRatio,
        byte[] starting) {
      super(operatorId);
      this.operatorName = operatorName;
      this.bounds = bounds;
      this.writers = writers;
      this.maxOpenPartitions = maxOpenPartitions;
      this.seedRatio = seedRatio;
      this.starting = starting;
    }

    @Override
    protected OperatorCoordinator getCoordinator(Context context) {
      RangeStatisticsSerializer serializer =
          new RangeStatisticsSerializer(bounds, writers, maxOpenPartitions);
      RangeStatistics initial = new RangeStatistics(bounds, writers, maxOpenPartitions, seedRatio);
      if (starting != null) {
        try {
          initial = SimpleVersionedSerialization.readVersionAndDeSerialize(serializer, starting);
        } catch (IOException e) {
          throw new UncheckedIOException("reading the input sample's range statistics", e);
        }
      }
      return new RangeCoordinator(operatorName, context, initial, serializer);
    }
  }
}
