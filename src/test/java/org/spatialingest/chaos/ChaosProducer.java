package org.spatialingest.chaos;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
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
 * Produces the run's input while faults happen: generated points and polygon refreshes ({@link
 * TelemetryGenerator}), one record in {@code malformedEvery} cut in half (a {@code malformed_json}
 * reject), at a steady rate: at least {@code minimum} records, and on until {@link #finish()} (the
 * sink faults need input flowing). Remembers which records were acknowledged: the accepted ones by
 * number (ids {@code rec-<n>}), the malformed ones by value.
 */
final class ChaosProducer implements AutoCloseable {
  private static final String GENERATED_PREFIX = "rec-";
  private final String bootstrap;
  private final String topic;
  private final int minimum;
  private final int malformedEvery;
  private final double perSecond;
  private final TelemetryGenerator generator;

  /** the ids' prefix: {@code rec-} (the generator's), or another job's own */
  private final String idPrefix;

  /**
   * record numbers the broker acknowledged (set by the producer's I/O thread only; read after it
   * ended)
   */
  private final BitSet acknowledged = new BitSet();

  private final BitSet malformedNumbers = new BitSet();

  /** numbers of acknowledged records that carried {@link #NEW_PROPERTY} (set like acknowledged) */
  private final BitSet withProperty = new BitSet();

  private volatile boolean propertyRequested;

  /** record number from which point records carry {@link #NEW_PROPERTY}; MAX_VALUE before */
  private volatile long propertyFrom = Long.MAX_VALUE;

  private final Set<String> malformed = java.util.Collections.synchronizedSet(new HashSet<>());
  private final AtomicLong acks = new AtomicLong();
  private final AtomicReference<Exception> failure = new AtomicReference<>();
  private final Thread thread;
  private volatile boolean stop;
  private volatile boolean finish;

  ChaosProducer(
      String bootstrap,
      String topic,
      int minimum,
      int malformedEvery,
      double perSecond,
      long seed) {
    this(bootstrap, topic, minimum, malformedEvery, perSecond, seed, GENERATED_PREFIX);
  }

  /**
   * @param idPrefix replaces the generator's {@code rec-} in every id (a second job's records,
   *     checked by id: {@link #acceptedIds()})
   */
  ChaosProducer(
      String bootstrap,
      String topic,
      int minimum,
      int malformedEvery,
      double perSecond,
      long seed,
      String idPrefix) {
    this.idPrefix = idPrefix;
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.minimum = minimum;
    this.malformedEvery = malformedEvery;
    this.perSecond = perSecond;
    this.generator = new TelemetryGenerator(seed, 50, 200, 200);
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
      for (int n = 0; (n < minimum || !finish) && !stop; n++) {
        long due = start + (long) (n / perSecond * 1e9);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
        if (propertyRequested && propertyFrom == Long.MAX_VALUE) {
          generator.batteryFrom(n);
          propertyFrom = n;
        }
        TelemetryGenerator.Record r = generator.next(System.currentTimeMillis());
        byte[] value = r.json();
        if (!idPrefix.equals(GENERATED_PREFIX)) {
          value =
              new String(value, StandardCharsets.UTF_8)
                  .replace("{\"id\":\"" + GENERATED_PREFIX, "{\"id\":\"" + idPrefix)
                  .getBytes(StandardCharsets.UTF_8);
        }
        boolean bad = malformedEvery > 0 && n % malformedEvery == malformedEvery - 1;
        boolean carries = !r.polygon() && n >= propertyFrom;
        if (bad) {
          value = Arrays.copyOf(value, value.length / 2); // a record cut short: malformed_json
        }
        int number = n;
        byte[] sent = value;
        producer.send(
            new ProducerRecord<>(topic, r.id().getBytes(StandardCharsets.UTF_8), value),
            (meta, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
                return;
              }
              if (bad) {
                malformed.add(new String(sent, StandardCharsets.UTF_8));
                malformedNumbers.set(number);
              } else if (carries) {
                withProperty.set(number);
              }
              acknowledged.set(number);
              acks.incrementAndGet();
            });
      }
      producer.flush();
    } catch (Exception e) {
      failure.compareAndSet(null, e);
    }
  }

  /** The property point records carry from {@link #startProperty()} on. */
  static final String NEW_PROPERTY = "battery_pct";

  /** From the next record on, point records carry {@link #NEW_PROPERTY}. */
  void startProperty() {
    propertyRequested = true;
  }

  /** numbers of the acknowledged, well-formed records that carried {@link #NEW_PROPERTY} */
  BitSet withProperty() {
    return withProperty;
  }

  /** Lets the producer stop once it has produced its minimum. */
  void finish() {
    finish = true;
  }

  /** Waits until every record was sent and acknowledged; fails if the producer gave one up. */
  void awaitDone() throws Exception {
    finish();
    thread.join();
    if (failure.get() != null) {
      throw new AssertionError(
          "the producer lost records (so the check could not tell what to expect)", failure.get());
    }
  }

  boolean isDone() {
    return !thread.isAlive();
  }

  long acknowledgedCount() {
    return acks.get();
  }

  /** numbers of the records the broker acknowledged (accepted ones have id {@code rec-<n>}) */
  BitSet acknowledged() {
    return acknowledged;
  }

  /** numbers of the acknowledged records that were malformed */
  BitSet malformedNumbers() {
    return malformedNumbers;
  }

  Set<String> malformed() {
    return malformed;
  }

  /** The ids of the acknowledged records that are not malformed (read after it ended). */
  List<String> acceptedIds() {
    List<String> ids = new ArrayList<>();
    for (int n = acknowledged.nextSetBit(0); n >= 0; n = acknowledged.nextSetBit(n + 1)) {
      if (!malformedNumbers.get(n)) {
        ids.add(idPrefix + n);
      }
    }
    return ids;
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join();
  }
}
