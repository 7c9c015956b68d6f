package org.spatialingest.chaos;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.local.TelemetryGenerator;

/**
 * Produces the run's input while faults happen: generated points and polygon refreshes ({@link TelemetryGenerator}),
 * one record in {@code malformedEvery} cut in half (a {@code malformed_json} reject), at a steady rate. Remembers
 * which records were acknowledged: the accepted ones by number (ids {@code rec-<n>}), the malformed ones by value.
 */
final class ChaosProducer implements AutoCloseable {
  private final String bootstrap;
  private final String topic;
  private final int count;
  private final int malformedEvery;
  private final double perSecond;
  private final TelemetryGenerator generator;
  /** per record number: 1 = an accepted record acknowledged by the broker, 2 = a malformed one */
  private final byte[] acknowledged;
  private final Set<String> malformed = java.util.Collections.synchronizedSet(new HashSet<>());
  private final AtomicLong acks = new AtomicLong();
  private final AtomicReference<Exception> failure = new AtomicReference<>();
  private final Thread thread;
  private volatile boolean stop;

  ChaosProducer(String bootstrap, String topic, int count, int malformedEvery, double perSecond, long seed) {
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.count = count;
    this.malformedEvery = malformedEvery;
    this.perSecond = perSecond;
    this.generator = new TelemetryGenerator(seed, 50, 200, 200);
    this.acknowledged = new byte[count];
    this.thread = new Thread(this::run, "chaos-producer");
  }

  void start() {
    thread.start();
  }

  private void run() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    // the broker is stopped on purpose: keep every record until it is back, never give one up
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(Integer.MAX_VALUE));
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "600000");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      long start = System.nanoTime();
      for (int n = 0; n < count && !stop; n++) {
        long due = start + (long) (n / perSecond * 1e9);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        TelemetryGenerator.Record r = generator.next(System.currentTimeMillis());
        byte[] value = r.json();
        boolean bad = malformedEvery > 0 && n % malformedEvery == malformedEvery - 1;
        if (bad) {
          value = Arrays.copyOf(value, value.length / 2); // a record cut short: malformed_json
        }
        int number = n;
        byte[] sent = value;
        producer.send(new ProducerRecord<>(topic, r.id().getBytes(StandardCharsets.UTF_8), value), (meta, e) -> {
          if (e != null) {
            failure.compareAndSet(null, e);
            return;
          }
          if (bad) {
            malformed.add(new String(sent, StandardCharsets.UTF_8));
          }
          acknowledged[number] = (byte) (bad ? 2 : 1);
          acks.incrementAndGet();
        });
      }
      producer.flush();
    } catch (Exception e) {
      failure.compareAndSet(null, e);
    }
  }

  /** Waits until every record was sent and acknowledged; fails if the producer gave one up. */
  void awaitDone() throws Exception {
    thread.join();
    if (failure.get() != null) {
      throw new AssertionError("the producer lost records (so the check could not tell what to expect)", failure.get());
    }
  }

  boolean isDone() {
    return !thread.isAlive();
  }

  long acknowledgedCount() {
    return acks.get();
  }

  /** 1 = accepted record {@code rec-<n>} acknowledged, 2 = malformed record acknowledged, 0 = not produced */
  byte[] acknowledged() {
    return acknowledged;
  }

  Set<String> malformed() {
    return malformed;
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join();
  }
}
