package org.spatialingest.sink.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;

/**
 * The lease against a real Hadoop table's FileIO, with short leases (renewed every 200 ms, live 3.6
 * s) and one job's clock skewed by ±10 min (issue #56): any other job is refused while the holder
 * renews, the same lineage too (a second job from the running one's savepoint); a failover (same
 * job id) takes it at once; a lease nobody renews is taken once it stayed unchanged for its
 * valid-for on the starter's own clock, however far the clocks differ; a lease last renewed long
 * ago is taken at once; a release leaves another job's lease.
 */
class SinkLeaseTest {
  private static final long RENEW_MS = 200;
  private static final long SLACK_MS = 3_000;
  private static final long TEN_MINUTES = 600_000;

  @Test
  void onlyTheLiveJobHoldsTheLeaseWhateverTheClocksSay(@TempDir Path dir) throws Exception {
    Table table = table(dir);
    SinkLease a = lease(table, "job-a", "lineage-1", 0);
    a.acquire();
    ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor();
    try {
      renewer.scheduleWithFixedDelay(a::renew, RENEW_MS, RENEW_MS, TimeUnit.MILLISECONDS);
      for (long skew : new long[] {0, TEN_MINUTES, -TEN_MINUTES}) {
        assertThatThrownBy(() -> lease(table, "job-b", "lineage-1", skew).acquire())
            .as("the same lineage under another job id, clock %+d ms", skew)
            .isInstanceOf(SinkLease.Refused.class)
            .hasMessageContaining("job job-a (lineage lineage-1)")
            .hasMessageContaining("that job is running")
            .hasMessageContaining("Give this job another `sink.id`");
        assertThatThrownBy(() -> lease(table, "job-c", "lineage-2", skew).acquire())
            .as("another lineage, clock %+d ms", skew)
            .isInstanceOf(SinkLease.Refused.class);
      }
      long start = System.nanoTime();
      lease(table, "job-a", "lineage-1", TEN_MINUTES).acquire(); // a failover of the holder
      assertThat((System.nanoTime() - start) / 1_000_000)
          .as("a failover waits only for its read-back")
          .isLessThan(3 * RENEW_MS + SLACK_MS);
    } finally {
      renewer.shutdownNow();
      renewer.awaitTermination(10, TimeUnit.SECONDS);
    }

    // job-a is gone without a clean stop: its lease is never renewed again
    for (long skew : new long[] {TEN_MINUTES, -TEN_MINUTES}) {
      writeLease(table, "job-a", System.currentTimeMillis());
      SinkLease b = lease(table, "job-b", "lineage-1", skew);
      long start = System.nanoTime();
      b.acquire();
      assertThat((System.nanoTime() - start) / 1_000_000)
          .as("watched for its valid-for on the starter's clock (%+d ms)", skew)
          .isGreaterThanOrEqualTo(3 * RENEW_MS + SLACK_MS);
      assertThat(readLease(table)).contains("job-id=job-b");
      // b renews now: a start of job-a again (e.g. an old savepoint of it) is refused
      ScheduledExecutorService renewB = Executors.newSingleThreadScheduledExecutor();
      try {
        renewB.scheduleWithFixedDelay(b::renew, RENEW_MS, RENEW_MS, TimeUnit.MILLISECONDS);
        assertThatThrownBy(() -> lease(table, "job-d", "lineage-1", 0).acquire())
            .isInstanceOf(SinkLease.Refused.class)
            .hasMessageContaining("job job-b");
        a.release();
        assertThat(readLease(table)).as("a release leaves another job's lease").contains("job-b");
      } finally {
        renewB.shutdownNow();
        renewB.awaitTermination(10, TimeUnit.SECONDS);
      }
      b.release();
      assertThat(table.io().newInputFile(leasePath(table)).exists()).isFalse();
    }

    // a lease last renewed an hour ago (a job killed long before): taken without watching
    writeLease(table, "job-a", System.currentTimeMillis() - 3_600_000);
    long start = System.nanoTime();
    lease(table, "job-e", "lineage-3", 0).acquire();
    assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(3 * RENEW_MS + SLACK_MS);
    assertThat(readLease(table)).contains("job-id=job-e");
  }

  private static final SinkScope SCOPE = new SinkScope("spatial-sink", "x", false);

  private static SinkLease lease(Table table, String jobId, String lineage, long skewMillis) {
    LongSupplier clock = () -> System.currentTimeMillis() + skewMillis;
    return new SinkLease(
        table.io(), table.location(), "t", SCOPE, jobId, lineage, RENEW_MS, SLACK_MS, clock);
  }

  private static Table table(Path dir) {
    JobConfig config = TestKit.config("localhost:1", "unused", dir, Map.of());
    SpatialIngestJob.ensureTables(config);
    return TestKit.table(config);
  }

  private static String leasePath(Table table) {
    return SinkFileNames.leaseFile(table.location(), SCOPE);
  }

  private static void writeLease(Table table, String jobId, long heartbeatMillis) throws Exception {
    try (var out = table.io().newOutputFile(leasePath(table)).createOrOverwrite()) {
      out.write(
          ("version=1\njob-id="
                  + jobId
                  + "\nlineage=lineage-1\nheartbeat-ms="
                  + heartbeatMillis
                  + "\nvalid-for-ms="
                  + (3 * RENEW_MS + SLACK_MS)
                  + "\n")
              .getBytes(StandardCharsets.UTF_8));
    }
  }

  private static String readLease(Table table) throws Exception {
    try (var in = table.io().newInputFile(leasePath(table)).newStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
