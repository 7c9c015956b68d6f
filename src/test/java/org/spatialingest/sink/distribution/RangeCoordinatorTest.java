package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.EventReceivingTasks;
import org.apache.flink.runtime.operators.coordination.MockOperatorCoordinatorContext;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.spatialingest.sizing.SizingBounds;

/**
 * The {@link RangeCoordinator} alone, in Flink's coordinator test context (its own thread, real
 * subtask gateways that record what they are sent): the early round after a start, the checkpoint
 * that waits for it, a restore that needs no early round, checkpoint rounds merged when every
 * subtask reported, stale reports dropped, and a failed attempt that gets nothing more. What
 * GlobalRangesTest shows end to end through a job, shown here event by event in well under a second
 * per case (the empty early round waits {@link StartupTimings#ANNOUNCE_WAIT_MILLIS}).
 */
class RangeCoordinatorTest {
  private static final SizingBounds BOUNDS =
      new SizingBounds(64_000_000, 4_000_000, Duration.ofHours(1), Duration.ofSeconds(1));
  private static final int SUBTASKS = 4;
  private static final int WRITERS = 8;

  private final EventReceivingTasks tasks = EventReceivingTasks.createForRunningTasks();
  private final MockOperatorCoordinatorContext context =
      new MockOperatorCoordinatorContext(new OperatorID(), SUBTASKS);
  private final RangeStatisticsSerializer checkpoints =
      new RangeStatisticsSerializer(BOUNDS, WRITERS, 32);
  private final List<RangeCoordinator> started = new ArrayList<>();

  @AfterEach
  void close() {
    started.forEach(RangeCoordinator::close);
  }

  private RangeCoordinator start(RangeStatistics initial) {
    RangeCoordinator coordinator =
        new RangeCoordinator("test-placement", context, initial, checkpoints);
    coordinator.start();
    started.add(coordinator);
    for (int s = 0; s < SUBTASKS; s++) {
      coordinator.executionAttemptReady(s, 0, tasks.createGatewayForSubtask(s, 0));
    }
    return coordinator;
  }

  private static RangeStatistics empty() {
    return new RangeStatistics(BOUNDS, WRITERS, 32, 0);
  }

  /** Subtask {@code s} saw 1,000 rows of one area, keys around {@code s * 10^15}. */
  private static SubtaskReport areaOf(int s, long round) {
    Random random = new Random(31L * s + round);
    long[] keys = new long[KeyReservoir.SIZE];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = s * 1_000_000_000_000_000L + random.nextInt(1_000_000);
    }
    return new SubtaskReport(
        round,
        1,
        0,
        List.of(
            List.of(
                new SubtaskReport.PartitionSample(
                    "day=1", 1_000, 100_000_000, System.currentTimeMillis(), keys))));
  }

  private static RangeEvents.Report report(int s, long round) throws Exception {
    return new RangeEvents.Report(
        SubtaskReportSerializer.VERSION, new SubtaskReportSerializer().serialize(areaOf(s, round)));
  }

  /** The ranges sent to {@code subtask} so far, decoded, oldest first. */
  private List<GlobalRanges> rangesSentTo(int subtask) throws Exception {
    List<GlobalRanges> sent = new ArrayList<>();
    for (OperatorEvent event : tasks.getSentEventsForSubtask(subtask)) {
      RangeEvents.Ranges ranges = (RangeEvents.Ranges) event;
      sent.add(new GlobalRangesSerializer().deserialize(ranges.version(), ranges.bytes()));
    }
    return sent;
  }

  /**
   * Waits until the coordinator's thread has run everything queued before this call (a checkpoint
   * queued behind the events; only while no early merge is due).
   */
  private static void settle(RangeCoordinator coordinator) throws Exception {
    CompletableFuture<byte[]> probe = new CompletableFuture<>();
    coordinator.checkpointCoordinator(Long.MAX_VALUE, probe);
    probe.get(5, TimeUnit.SECONDS);
  }

  @Test
  void theEarlyRoundMergesWhenEverySubtaskReportedAndTheWaitingCheckpointCompletesAfterIt()
      throws Exception {
    RangeCoordinator coordinator = start(empty());
    for (int s = 0; s < SUBTASKS; s++) {
      coordinator.handleEventFromOperator(s, 0, new RangeEvents.Request(false));
    }
    coordinator.handleEventFromOperator(0, 0, new RangeEvents.Request(true));
    CompletableFuture<byte[]> checkpoint = new CompletableFuture<>();
    coordinator.checkpointCoordinator(1, checkpoint);
    for (int s = 0; s < SUBTASKS - 1; s++) {
      coordinator.handleEventFromOperator(s, 0, report(s, 0));
    }
    Thread.sleep(200);
    assertThat(checkpoint).as("the checkpoint waits while the early merge is due").isNotDone();
    assertThat(tasks.getNumberOfSentEvents())
        .as("no ranges before every subtask reported")
        .isZero();

    coordinator.handleEventFromOperator(SUBTASKS - 1, 0, report(SUBTASKS - 1, 0));
    byte[] state = checkpoint.get(5, TimeUnit.SECONDS);
    assertThat(context.isJobFailed()).isFalse();
    for (int s = 0; s < SUBTASKS; s++) {
      List<GlobalRanges> sent = rangesSentTo(s);
      assertThat(sent).as("subtask %d got the early merge's ranges once", s).hasSize(1);
      assertThat(sent.get(0).round()).isZero();
    }
    // every subtask's area in a block of its own: the cuts fall between the areas
    long[] boundaries =
        rangesSentTo(0).get(0).tables().get(0).partitions().get("day=1").boundaries();
    for (int s = 1; s < SUBTASKS; s++) {
      long after = (s - 1) * 1_000_000_000_000_000L + 1_000_000;
      long before = s * 1_000_000_000_000_000L;
      assertThat(java.util.Arrays.stream(boundaries).anyMatch(b -> b >= after && b <= before))
          .as("a cut in the gap between area %d and %d", s - 1, s)
          .isTrue();
    }
    // the checkpoint holds the merged statistics: a restore cuts the same ranges
    RangeStatistics restored =
        org.apache.flink.core.io.SimpleVersionedSerialization.readVersionAndDeSerialize(
            checkpoints, state);
    assertThat(restored.ranges(0).tables().get(0).partitions().get("day=1").boundaries())
        .isEqualTo(boundaries);
  }

  @Test
  void withoutAnnouncedRowsTheEarlyRoundEndsEmptyAndCheckpointsGoOn() throws Exception {
    RangeCoordinator coordinator = start(empty());
    coordinator.handleEventFromOperator(0, 0, new RangeEvents.Request(false));
    CompletableFuture<byte[]> checkpoint = new CompletableFuture<>();
    coordinator.checkpointCoordinator(1, checkpoint);
    checkpoint.get(StartupTimings.ANNOUNCE_WAIT_MILLIS + 5_000, TimeUnit.MILLISECONDS);
    assertThat(tasks.getNumberOfSentEvents()).as("nothing to cut, nothing sent").isZero();

    // rows that come later open the early round again, and the next checkpoint waits for it
    coordinator.handleEventFromOperator(1, 0, new RangeEvents.Request(true));
    CompletableFuture<byte[]> next = new CompletableFuture<>();
    coordinator.checkpointCoordinator(2, next);
    Thread.sleep(200);
    assertThat(next).isNotDone();
    for (int s = 0; s < SUBTASKS; s++) {
      coordinator.handleEventFromOperator(s, 0, report(s, 0));
    }
    next.get(5, TimeUnit.SECONDS);
    assertThat(rangesSentTo(0)).hasSize(1);
  }

  @Test
  void aRestoreSendsItsRangesToEachOpeningSubtaskAndNoCheckpointWaits() throws Exception {
    RangeStatistics merged = empty();
    List<SubtaskReport> reports = new ArrayList<>();
    for (int s = 0; s < SUBTASKS; s++) {
      reports.add(areaOf(s, 7));
    }
    merged.merge(reports, System.currentTimeMillis());
    byte[] state =
        org.apache.flink.core.io.SimpleVersionedSerialization.writeVersionAndSerialize(
            checkpoints, merged);

    RangeCoordinator coordinator = start(empty());
    coordinator.resetToCheckpoint(7, state);
    CompletableFuture<byte[]> checkpoint = new CompletableFuture<>();
    coordinator.checkpointCoordinator(8, checkpoint);
    checkpoint.get(1, TimeUnit.SECONDS);
    coordinator.handleEventFromOperator(2, 0, new RangeEvents.Request(false));
    coordinator.handleEventFromOperator(2, 0, new RangeEvents.Request(true)); // ignored: has ranges
    settle(coordinator);
    assertThat(rangesSentTo(2)).as("the opening subtask gets the restored ranges").hasSize(1);
    assertThat(rangesSentTo(2).get(0).tables().get(0).partitions().get("day=1").boundaries())
        .isEqualTo(merged.ranges(0).tables().get(0).partitions().get("day=1").boundaries());
    assertThat(rangesSentTo(0)).as("a subtask that did not ask gets nothing").isEmpty();
  }

  @Test
  void checkpointRoundsMergeOnceEverySubtaskReportedAndDropStaleReports() throws Exception {
    RangeStatistics merged = empty();
    List<SubtaskReport> reports = new ArrayList<>();
    for (int s = 0; s < SUBTASKS; s++) {
      reports.add(areaOf(s, 1));
    }
    merged.merge(reports, System.currentTimeMillis());
    RangeCoordinator coordinator = start(merged); // with ranges from the start, as a file sample

    for (int s = 0; s < SUBTASKS; s++) {
      coordinator.handleEventFromOperator(s, 0, report(s, 5));
    }
    settle(coordinator);
    for (int s = 0; s < SUBTASKS; s++) {
      assertThat(rangesSentTo(s)).as("round 5 merged and sent to subtask %d", s).hasSize(1);
      assertThat(rangesSentTo(s).get(0).round()).isEqualTo(5);
    }
    coordinator.handleEventFromOperator(0, 0, report(0, 4)); // late: dropped
    coordinator.handleEventFromOperator(0, 0, report(0, 6)); // one of four: not yet
    settle(coordinator);
    assertThat(tasks.getNumberOfSentEvents()).isEqualTo(SUBTASKS);

    // a subtask whose attempt failed gets nothing more; a later round begins, so round 6 merges
    // from the three that reported
    coordinator.executionAttemptFailed(3, 0, new RuntimeException("killed"));
    for (int s = 1; s < SUBTASKS - 1; s++) {
      coordinator.handleEventFromOperator(s, 0, report(s, 6));
    }
    coordinator.handleEventFromOperator(0, 0, report(0, 7));
    settle(coordinator);
    assertThat(rangesSentTo(0)).hasSize(2);
    assertThat(rangesSentTo(0).get(1).round()).isEqualTo(6);
    assertThat(rangesSentTo(3)).as("the failed attempt's gateway is forgotten").hasSize(1);
    assertThat(context.isJobFailed()).isFalse();
  }

  /**
   * Reassignment: when the keys move between checkpoint rounds (every subtask now reads subtask 3's
   * area), the next merge recuts the boundaries toward where the keys are and sends the same new
   * set to every subtask.
   */
  @Test
  void aLaterRoundWhoseKeysMovedRecutsTheRangesForEverySubtask() throws Exception {
    RangeStatistics merged = empty();
    List<SubtaskReport> first = new ArrayList<>();
    for (int s = 0; s < SUBTASKS; s++) {
      first.add(areaOf(s, 1));
    }
    merged.merge(first, System.currentTimeMillis());
    RangeCoordinator coordinator = start(merged);
    for (int s = 0; s < SUBTASKS; s++) {
      coordinator.handleEventFromOperator(s, 0, report(s, 5));
    }
    settle(coordinator);
    for (int s = 0; s < SUBTASKS; s++) {
      SubtaskReport moved = areaOf(SUBTASKS - 1, 10 + s);
      coordinator.handleEventFromOperator(
          s,
          0,
          new RangeEvents.Report(
              SubtaskReportSerializer.VERSION,
              new SubtaskReportSerializer()
                  .serialize(
                      new SubtaskReport(
                          6, moved.seconds(), moved.encodedPerBufferedByte(), moved.tables()))));
    }
    settle(coordinator);
    long[] before = rangesSentTo(0).get(0).tables().get(0).partitions().get("day=1").boundaries();
    long[] after = rangesSentTo(0).get(1).tables().get(0).partitions().get("day=1").boundaries();
    for (int s = 1; s < SUBTASKS; s++) {
      assertThat(rangesSentTo(s)).hasSize(2);
      assertThat(rangesSentTo(s).get(1).round()).isEqualTo(6);
      assertThat(rangesSentTo(s).get(1).tables().get(0).partitions().get("day=1").boundaries())
          .as("every subtask gets the same new boundaries")
          .isEqualTo(after);
    }
    long areaStart = (SUBTASKS - 1) * 1_000_000_000_000_000L;
    assertThat(java.util.Arrays.stream(after).filter(b -> b >= areaStart).count())
        .as(
            "more cuts inside the area the keys moved to: %s -> %s",
            java.util.Arrays.toString(before), java.util.Arrays.toString(after))
        .isGreaterThan(java.util.Arrays.stream(before).filter(b -> b >= areaStart).count());
    assertThat(context.isJobFailed()).isFalse();
  }
}
