package org.spatialingest.tools;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.spatialingest.geometry.RawRecord;
import org.spatialingest.source.KafkaClients;

/**
 * Reads the newest records of a topic with a plain {@link KafkaConsumer} that never commits: no
 * {@code group.id}, {@code enable.auto.commit=false}, partitions assigned manually and positions
 * set by seeking back from the end offsets. Also estimates the topic's rate from offsets: records
 * between the offset at {@code now - window} ({@code offsetsForTimes}) and the end offset, divided
 * by the window.
 */
public final class KafkaSampler {
  private KafkaSampler() {}

  /**
   * What was read.
   *
   * @param records the sampled records, partition by partition, each in offset order
   * @param partitions partitions of the topic
   * @param perPartition records taken from each partition, by partition number
   * @param rate the topic rate estimate
   */
  public record TopicSample(
      List<RawRecord> records,
      int partitions,
      Map<Integer, Integer> perPartition,
      RateEstimate rate) {}

  /**
   * Records/s estimates.
   *
   * @param windowSeconds the offsets window
   * @param recordsInWindow offsets between {@code now - window} and the end offsets, summed over
   *     partitions
   * @param offsetsRate {@code recordsInWindow / windowSeconds}
   * @param sampleTimestampsRate sum over partitions of {@code (n - 1) / (last - first timestamp)}
   *     of the sampled records; {@code NaN} when no partition has two records with different
   *     timestamps
   */
  public record RateEstimate(
      double windowSeconds,
      long recordsInWindow,
      double offsetsRate,
      double sampleTimestampsRate) {}

  /**
   * @param extraProperties consumer properties (security settings etc.); {@code group.id} and auto
   *     commit are refused
   */
  public static TopicSample sample(
      String bootstrap,
      String topic,
      int n,
      Duration window,
      Map<String, String> extraProperties,
      Duration timeout,
      Clock clock) {
    if (extraProperties.containsKey(ConsumerConfig.GROUP_ID_CONFIG)
        || "true".equalsIgnoreCase(extraProperties.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG))) {
      throw new IllegalArgumentException(
          "the sampler never joins a group or commits offsets; remove group.id and"
              + " enable.auto.commit");
    }
    Properties p = new Properties();
    p.putAll(extraProperties);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "spatial-ingest-plan-sampler");
    p.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
    KafkaClients.withConsumerDefaults(p); // what the job reads
    long deadline = System.nanoTime() + timeout.toNanos();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
      if (infos == null || infos.isEmpty()) {
        throw new IllegalArgumentException(
            "topic '" + topic + "' does not exist or has no partitions");
      }
      List<TopicPartition> tps = new ArrayList<>();
      infos.forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps, timeout);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, timeout);
      long now = clock.millis();

      long inWindow = 0;
      Map<TopicPartition, Long> at = new HashMap<>();
      tps.forEach(tp -> at.put(tp, Math.max(0, now - window.toMillis())));
      Map<TopicPartition, OffsetAndTimestamp> since = consumer.offsetsForTimes(at, timeout);
      for (TopicPartition tp : tps) {
        OffsetAndTimestamp o = since.get(tp);
        if (o != null) {
          inWindow += Math.max(0, end.get(tp) - o.offset());
        }
      }

      Map<TopicPartition, Long> quota = allocate(tps, begin, end, n);
      List<TopicPartition> assigned = new ArrayList<>();
      quota.forEach(
          (tp, q) -> {
            if (q > 0) {
              assigned.add(tp);
            }
          });
      Map<Integer, List<RawRecord>> byPartition = new HashMap<>();
      Map<Integer, long[]> timestamps = new HashMap<>(); // first, last, count
      consumer.assign(assigned);
      for (TopicPartition tp : assigned) {
        consumer.seek(tp, end.get(tp) - quota.get(tp));
        byPartition.put(tp.partition(), new ArrayList<>());
      }
      List<TopicPartition> pending = new ArrayList<>(assigned);
      while (!pending.isEmpty()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "timed out reading the newest records of '" + topic + "'");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          if (r.offset() >= end.get(tp) || r.value() == null) {
            continue; // newer than the end offsets we sampled up to, or a tombstone
          }
          byPartition.get(r.partition()).add(new RawRecord(r.value(), r.timestamp()));
          long[] t =
              timestamps.computeIfAbsent(
                  r.partition(), k -> new long[] {r.timestamp(), r.timestamp(), 0});
          t[0] = Math.min(t[0], r.timestamp());
          t[1] = Math.max(t[1], r.timestamp());
          t[2]++;
        }
        pending.removeIf(tp -> consumer.position(tp) >= end.get(tp));
      }
      consumer.unsubscribe();

      List<RawRecord> records = new ArrayList<>();
      Map<Integer, Integer> perPartition = new TreeMap<>();
      for (TopicPartition tp : tps) {
        List<RawRecord> part = byPartition.getOrDefault(tp.partition(), List.of());
        records.addAll(part);
        perPartition.put(tp.partition(), part.size());
      }
      double tsRate = 0;
      boolean any = false;
      for (long[] t : timestamps.values()) {
        if (t[2] > 1 && t[1] > t[0]) {
          tsRate += (t[2] - 1) / ((t[1] - t[0]) / 1000.0);
          any = true;
        }
      }
      double windowSeconds = window.toMillis() / 1000.0;
      return new TopicSample(
          records,
          tps.size(),
          perPartition,
          new RateEstimate(
              windowSeconds, inWindow, inWindow / windowSeconds, any ? tsRate : Double.NaN));
    }
  }

  /** Spreads {@code n} over the partitions as evenly as their available records allow. */
  static Map<TopicPartition, Long> allocate(
      List<TopicPartition> tps,
      Map<TopicPartition, Long> begin,
      Map<TopicPartition, Long> end,
      long n) {
    Map<TopicPartition, Long> quota = new HashMap<>();
    tps.forEach(tp -> quota.put(tp, 0L));
    long remaining = n;
    while (remaining > 0) {
      List<TopicPartition> open = new ArrayList<>();
      for (TopicPartition tp : tps) {
        if (quota.get(tp) < end.get(tp) - begin.get(tp)) {
          open.add(tp);
        }
      }
      if (open.isEmpty()) {
        break;
      }
      long share = Math.max(1, remaining / open.size());
      for (TopicPartition tp : open) {
        if (remaining == 0) {
          break;
        }
        long available = end.get(tp) - begin.get(tp) - quota.get(tp);
        long take = Math.min(Math.min(share, available), remaining);
        quota.put(tp, quota.get(tp) + take);
        remaining -= take;
      }
    }
    return quota;
  }
}
