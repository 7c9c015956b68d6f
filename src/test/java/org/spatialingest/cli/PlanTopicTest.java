package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.spatialingest.TestKit;
import org.spatialingest.geometry.RawRecord;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.tools.KafkaSampler;

/**
 * plan --topic against a real KRaft broker: newest N records, rate from offsets, no group offsets
 * committed.
 */
class PlanTopicTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  static EmbeddedKafka kafka;

  @BeforeAll
  static void start() throws Exception {
    kafka = EmbeddedKafka.start(null);
    kafka.createTopic("telemetry", 3);
    TestKit.produce(
        kafka.bootstrapServers(), "telemetry", new TelemetryGenerator(5, 6, 25, 400), 300);
    kafka.createTopic("empty", 1);
  }

  @AfterAll
  static void stop() throws Exception {
    kafka.close();
  }

  @Test
  void readsTheNewestRecordsAndEstimatesTheRateWithoutCommitting() throws Exception {
    CliRun r =
        CliRun.of(
            "plan",
            "--topic",
            "telemetry",
            "--bootstrap",
            kafka.bootstrapServers(),
            "--sample-records",
            "120",
            "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("source").asText()).isEqualTo("kafka:telemetry");
    assertThat(j.get("recordsRead").asLong()).isEqualTo(120);
    assertThat(j.get("sampleSize").asLong()).isEqualTo(120);
    assertThat(j.get("parseFailures").asLong()).isZero();
    assertThat(j.get("encodedBytesSource").asText()).isEqualTo("measured-parquet");
    JsonNode topic = j.get("topic");
    assertThat(topic.get("partitions").asInt()).isEqualTo(3);
    int perPartition = 0;
    for (JsonNode v : topic.get("sampledPerPartition")) {
      perPartition += v.asInt();
    }
    assertThat(perPartition).isEqualTo(120);
    // all 300 records were produced within the last 5 minutes: 300 / 300 s
    assertThat(topic.get("recordsInWindow").asLong()).isEqualTo(300);
    assertThat(j.get("rateSource").asText()).isEqualTo("kafka-offsets");
    assertThat(j.get("recordsPerSecond").asDouble()).isEqualTo(1.0);
    assertThat(j.get("rowsByTime").asLong()).isEqualTo(120); // 1 rec/s * 120 s

    CliRun flag =
        CliRun.of(
            "plan",
            "--topic",
            "telemetry",
            "--bootstrap",
            kafka.bootstrapServers(),
            "--sample-records",
            "30",
            "--rate",
            "42",
            "--rate-window",
            "1m",
            "--json");
    assertThat(flag.exitCode()).as(flag.err()).isZero();
    JsonNode f = JSON.readTree(flag.out());
    assertThat(f.get("recordsPerSecond").asDouble()).isEqualTo(42.0);
    assertThat(f.get("rateSource").asText()).isEqualTo("flag");
    assertThat(f.get("topic").get("rateWindowSeconds").asDouble()).isEqualTo(60.0);

    try (Admin admin = Admin.create(kafka.adminProperties())) {
      assertThat(admin.listGroups().all().get())
          .as("the sampler never joins or creates a group")
          .isEmpty();
      assertThat(
              admin
                  .listConsumerGroupOffsets("spatial-ingest-plan-sampler")
                  .partitionsToOffsetAndMetadata()
                  .get())
          .isEmpty();
    }

    CliRun group =
        CliRun.of(
            "plan",
            "--topic",
            "telemetry",
            "--bootstrap",
            kafka.bootstrapServers(),
            "--consumer-property",
            "group.id=sneaky",
            "--rate",
            "1");
    assertThat(group.exitCode()).isEqualTo(2);
    assertThat(group.err()).contains("group.id");
    CliRun missing = CliRun.of("plan", "--topic", "telemetry", "--rate", "1");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--bootstrap");
    CliRun empty =
        CliRun.of(
            "plan", "--topic", "empty", "--bootstrap", kafka.bootstrapServers(), "--rate", "1");
    assertThat(empty.exitCode()).isEqualTo(2);
    assertThat(empty.err()).contains("no records");
  }

  @Test
  void samplesTheTailOfEveryPartition() throws Exception {
    KafkaSampler.TopicSample s =
        KafkaSampler.sample(
            kafka.bootstrapServers(),
            "telemetry",
            60,
            Duration.ofMinutes(5),
            Map.of(),
            Duration.ofSeconds(30),
            Clock.systemUTC());
    assertThat(s.records()).hasSize(60);
    // what an independent reader sees as the last 20 records of each partition
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    Map<Integer, List<String>> tails = new HashMap<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps =
          List.of(
              new TopicPartition("telemetry", 0),
              new TopicPartition("telemetry", 1),
              new TopicPartition("telemetry", 2));
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps);
      Map<Integer, List<String>> all = new HashMap<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))
          && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
          all.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(new String(r.value()));
        }
      }
      all.forEach((k, v) -> tails.put(k, v.subList(Math.max(0, v.size() - 20), v.size())));
    }
    List<String> expected = new ArrayList<>();
    for (int part = 0; part < 3; part++) {
      assertThat(s.perPartition().get(part)).isEqualTo(20);
      expected.addAll(tails.get(part));
    }
    assertThat(s.records().stream().map(RawRecord::payload).map(String::new).toList())
        .isEqualTo(expected);
    assertThat(s.records()).allMatch(r -> r.ingestMillis() != null && r.ingestMillis() > 0);
    assertThat(s.rate().recordsInWindow()).isEqualTo(300L);
  }
}
