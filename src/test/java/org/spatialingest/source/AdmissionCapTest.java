package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;

/**
 * The admission cap on a real broker and MiniCluster: the admitted rate holds the cap and offsets
 * still commit.
 */
@Tag("extended") // admission.* is opt-in (off by default); ~17 s
class AdmissionCapTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();
  static final AtomicLong SEEN = new AtomicLong();

  @Test
  void admittedRateHoldsTheCapAndGroupOffsetsAdvance(@TempDir Path dir) throws Exception {
    String topic = "capped";
    kafka.createTopic(topic, 2);
    TestKit.produce(kafka.bootstrapServers(), topic, new TelemetryGenerator(41, 10, 0, 0), 8_000);
    double cap = 200;
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            Map.of(
                "admission.max-records-per-second",
                Double.toString(cap),
                "sink.max-latency",
                "1s",
                "checkpoint.interval",
                "500ms"));
    JobClient job = startCounted(config, false);
    try (Admin admin = Admin.create(kafka.adminProperties())) {
      awaitFirstRecord();
      Thread.sleep(2_000); // past the first second of budget a reader starts with
      long c1 = SEEN.get();
      long t1 = System.nanoTime();
      long offsets1 = groupOffsets(admin, config.groupId());
      Thread.sleep(10_000);
      long c2 = SEEN.get();
      long t2 = System.nanoTime();
      long offsets2 = groupOffsets(admin, config.groupId());
      double rate = (c2 - c1) / ((t2 - t1) / 1e9);

      assertThat(rate)
          .as("admitted records/s over 10 s with a cap of %s", cap)
          .isBetween(cap * 0.8, cap * 1.2);
      assertThat(c2)
          .as("the backlog is far from consumed: the cap, not the input, limits")
          .isLessThan(8_000);
      assertThat(offsets2)
          .as("group offsets committed with the cap on (%d, then %d)", offsets1, offsets2)
          .isGreaterThan(0)
          .isGreaterThan(offsets1);
      Thread.sleep(3_000);
      assertThat(groupOffsets(admin, config.groupId()))
          .as("and they keep advancing")
          .isGreaterThan(offsets2);
    } finally {
      TestKit.cancelAndWait(job);
    }
  }

  /**
   * The same cap on a file source (a backfill): the admitted rate holds it, where before the keys
   * were ignored with {@code source: file:}.
   */
  @Test
  void aFileSourceHoldsTheCapToo(@TempDir Path dir) throws Exception {
    Path in = java.nio.file.Files.createDirectories(dir.resolve("in"));
    TelemetryGenerator generator = new TelemetryGenerator(43, 10, 0, 0);
    StringBuilder lines = new StringBuilder();
    long now = System.currentTimeMillis();
    for (int i = 0; i < 8_000; i++) {
      lines
          .append(
              new String(generator.next(now + i).json(), java.nio.charset.StandardCharsets.UTF_8))
          .append('\n');
    }
    java.nio.file.Files.writeString(in.resolve("backfill.ndjson"), lines);
    double cap = 200;
    JobConfig config =
        TestKit.config(
            "localhost:1",
            "unused",
            dir.resolve("warehouse"),
            Map.of(
                "source",
                "file:" + in,
                "admission.max-records-per-second",
                Double.toString(cap),
                "sink.max-latency",
                "1s",
                "checkpoint.interval",
                "500ms"));
    JobClient job = startCounted(config, true);
    try {
      awaitFirstRecord();
      Thread.sleep(2_000);
      long c1 = SEEN.get();
      long t1 = System.nanoTime();
      Thread.sleep(10_000);
      long c2 = SEEN.get();
      double rate = (c2 - c1) / ((System.nanoTime() - t1) / 1e9);
      assertThat(rate)
          .as("admitted lines/s over 10 s with a cap of %s", cap)
          .isBetween(cap * 0.8, cap * 1.2);
      assertThat(c2).as("the file is far from read: the cap limits").isLessThan(8_000);
    } finally {
      if (!job.getJobStatus().get().isGloballyTerminalState()) {
        TestKit.cancelAndWait(job); // a bounded job the cap did not hold would have finished
      }
    }
  }

  /** The job at parallelism 1, counting in {@link #SEEN} the records its source admits. */
  private static JobClient startCounted(JobConfig config, boolean bounded) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    SpatialIngestJob.configureCheckpointing(env, config);
    SEEN.set(0);
    DataStream<SourceRecord> records =
        SpatialIngestJob.source(env, config, bounded, SpatialIngestJob.decideStart(env, config))
            .map(
                (MapFunction<SourceRecord, SourceRecord>)
                    r -> {
                      SEEN.incrementAndGet();
                      return r;
                    })
            .name("count");
    SpatialIngestJob.sink(SpatialIngestJob.transform(records, config), config);
    return env.executeAsync("capped");
  }

  private static void awaitFirstRecord() throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    while (SEEN.get() == 0 && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
  }

  private static long groupOffsets(Admin admin, String group) throws Exception {
    Map<?, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    return offsets.values().stream().mapToLong(o -> o == null ? 0 : o.offset()).sum();
  }
}
