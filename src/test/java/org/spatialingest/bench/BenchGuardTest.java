package org.spatialingest.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.FailOnceAfterCheckpoint;
import org.spatialingest.source.SourceRecord;

/**
 * The benchmark child's guards and checkpoint figures on a real MiniCluster ({@link ChildCluster},
 * REST on loopback): a restart fails the phase with its cause, a wait past its time-out fails
 * clearly and cancels the job, and the checkpoint summary combines the REST history, the arrival
 * probe and a {@code spatialSink.stagedBytes} counter.
 */
@Tag("extended") // guards the benchmark harness, which runs in -Pbench only
class BenchGuardTest {
  private static final int RECORD_BYTES = 100;
  private ChildCluster cluster;

  @BeforeEach
  void start(@TempDir Path dir) throws Exception {
    cluster = ChildCluster.start(2, dir.resolve("checkpoints"), JobMonitor.LIVE_PERIOD);
    ArrivalProbe.reset();
    FailOnceAfterCheckpoint.reset();
  }

  @AfterEach
  void stop() throws Exception {
    cluster.close();
  }

  @Test
  void aRestartInsideAPhaseFailsItWithTheCause() throws Exception {
    StreamExecutionEnvironment env = environment();
    records(env, 1_000_000).map(new FailOnceAfterCheckpoint(0, 50)).sinkTo(new DiscardingSink<>());
    JobClient job = env.executeAsync("restarts");
    PhaseGuard guard = new PhaseGuard("test phase", job, monitor(job));

    assertThatThrownBy(
            () ->
                guard.await(
                    job.getJobExecutionResult(), Duration.ofMinutes(2), "the end of the job"))
        .isInstanceOf(PhaseFailure.class)
        .hasMessageContaining("test phase: the job restarted 1 time(s) inside the measured phase")
        .hasMessageContaining("injected failure after a completed checkpoint");
    assertThat(job.getJobStatus().get(30, TimeUnit.SECONDS)).isEqualTo(JobStatus.CANCELED);
  }

  @Test
  void aWaitPastItsTimeOutFailsClearlyAndCancelsTheJob() throws Exception {
    StreamExecutionEnvironment env = environment();
    records(env, 1_000_000).sinkTo(new DiscardingSink<>());
    JobClient job = env.executeAsync("never-ends");
    PhaseGuard guard = new PhaseGuard("test phase", job, monitor(job));
    guard.awaitRunning(Duration.ofMinutes(1));

    assertThatThrownBy(
            () ->
                guard.await(
                    job.getJobExecutionResult(), Duration.ofSeconds(3), "the end of the job"))
        .isInstanceOf(PhaseFailure.class)
        .hasMessage("test phase: the end of the job did not happen within PT3S (phase-timeout)");
    assertThat(job.getJobStatus().get(30, TimeUnit.SECONDS)).isEqualTo(JobStatus.CANCELED);
  }

  @Test
  void checkpointCostsCombineTheRestHistoryTheProbeAndTheStagedCounter() throws Exception {
    StreamExecutionEnvironment env = environment();
    int records = 6_000;
    records(env, records).map(new Stages()).name("stages").sinkTo(new DiscardingSink<>());
    JobClient job = env.executeAsync("checkpoints");
    JobRest rest = new JobRest(cluster.restAddress(), job.getJobID());
    JobMonitor monitor = new JobMonitor(rest, cluster.monitorPeriod());
    new PhaseGuard("test phase", job, monitor)
        .await(job.getJobExecutionResult(), Duration.ofMinutes(2), "the end");
    monitor.close();

    assertThat(monitor.failure()).isNull();
    assertThat(rest.checkpointStorage()).isEqualTo("FileSystemCheckpointStorage");
    CheckpointSummary c =
        CheckpointSummary.of(
            rest.checkpoints().path("history"),
            ArrivalProbe.arrivedByCheckpoint(),
            monitor.stagedByCheckpoint(),
            monitor.stagedMetricSeen());
    assertThat(c.stagedMetric()).isTrue();
    assertThat(c.completed()).isGreaterThanOrEqualTo(3);
    assertThat(c.withArrivals()).isBetween(1, c.completed());
    assertThat(c.arrivedBytes()).isPositive().isLessThanOrEqualTo((long) records * RECORD_BYTES);
    // each subtask stages 1,000 bytes per checkpoint that saw records: 2 x 1,000 per such
    // checkpoint
    assertThat(c.stagedBytes()).isPositive().isEqualTo(c.stagedBytes() / 2_000 * 2_000);
    assertThat(c.ratioMedian()).isPositive().isLessThanOrEqualTo(c.ratioMax());
    assertThat(c.durationP50Ms()).isLessThanOrEqualTo(c.durationP95Ms());
  }

  private StreamExecutionEnvironment environment() {
    StreamExecutionEnvironment env = cluster.environment();
    env.setParallelism(2);
    env.enableCheckpointing(200);
    return env;
  }

  private JobMonitor monitor(JobClient job) throws Exception {
    return new JobMonitor(
        new JobRest(cluster.restAddress(), job.getJobID()), cluster.monitorPeriod());
  }

  /**
   * {@code count} records of {@link #RECORD_BYTES} bytes, at most ~1,000 per second and subtask,
   * through the probe.
   */
  private static DataStream<SourceRecord> records(StreamExecutionEnvironment env, long count) {
    return env.fromSequence(1, count)
        .map(
            i -> {
              LockSupport.parkNanos(1_000_000);
              return new SourceRecord(new byte[RECORD_BYTES], "t", 0, i, 0);
            })
        .returns(SourceRecord.class)
        .map(new ArrivalProbe());
  }

  /**
   * Has the writer counter of our sink's shape: stages 1,000 bytes at each barrier after records
   * went by.
   */
  static final class Stages extends RichMapFunction<SourceRecord, SourceRecord>
      implements CheckpointedFunction {
    private transient Counter staged;
    private transient boolean seen;

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext context) {
      staged = getRuntimeContext().getMetricGroup().addGroup("spatialSink").counter("stagedBytes");
    }

    @Override
    public SourceRecord map(SourceRecord value) {
      seen = true;
      return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
      if (seen) {
        staged.inc(1_000);
        seen = false;
      }
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}
  }
}
