package org.spatialingest.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.spatialingest.local.TelemetryGenerator;

/**
 * The benchmark input. The live sequence is generated once (fixed seed and event times) and kept in
 * memory, so both sinks receive byte-identical records at the same offered rate; the backlog is
 * produced once as fast as possible and read by both throughput runs.
 */
final class InputFeed {
  /** What one paced replay achieved. */
  record Produced(long records, long bytes, long millis, long maxBehindMillis) {
    double rate() {
      return records * 1000.0 / Math.max(1, millis);
    }
  }

  private final String bootstrap;
  private final BenchSettings settings;
  private final List<byte[]> keys = new ArrayList<>();
  private final List<byte[]> values = new ArrayList<>();
  private long bytes;
  private long polygons;

  /** Positions and event times of the input last generated or produced, for its query set. */
  private final List<double[]> positions = new ArrayList<>();

  private long firstEventMs = Long.MAX_VALUE;
  private long lastEventMs = Long.MIN_VALUE;

  InputFeed(String bootstrap, BenchSettings settings) {
    this.bootstrap = bootstrap;
    this.settings = settings;
  }

  /** Generates the live sequence: event times spaced 1/rate apart from {@code eventTimeBase}. */
  void generateLive(long eventTimeBase) {
    TelemetryGenerator gen = generator(settings.seed());
    long n = settings.liveRecords();
    for (long i = 0; i < n; i++) {
      long eventTime = eventTimeBase + i * 1000 / settings.rate();
      TelemetryGenerator.Record r = gen.next(eventTime);
      seen(r, eventTime);
      keys.add(r.id().getBytes());
      values.add(r.json());
      bytes += r.json().length;
      polygons += r.polygon() ? 1 : 0;
    }
  }

  long liveBytes() {
    return bytes;
  }

  long livePolygons() {
    return polygons;
  }

  /** Replays the live sequence to {@code topic} at the offered rate, on the calling thread. */
  Produced replayLive(String topic) {
    long start = System.nanoTime();
    long maxBehind = 0;
    int sent = 0;
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      while (sent < values.size()) {
        double elapsedSec = (System.nanoTime() - start) / 1e9;
        long due = Math.min(values.size(), (long) (elapsedSec * settings.rate()));
        if (due > sent) {
          // how far behind schedule the oldest unsent record is
          maxBehind =
              Math.max(maxBehind, (long) (elapsedSec * 1000 - sent * 1000.0 / settings.rate()));
        }
        while (sent < due) {
          producer.send(new ProducerRecord<>(topic, keys.get(sent), values.get(sent)));
          sent++;
        }
        sleep(5);
      }
      producer.flush();
    }
    return new Produced(sent, bytes, (System.nanoTime() - start) / 1_000_000, maxBehind);
  }

  /**
   * Produces {@code settings.backlog()} records (their own seed) to {@code topic} as fast as
   * possible.
   */
  Produced produceBacklog(String topic) {
    return produceBacklog(topic, settings.backlog());
  }

  /**
   * Produces the first {@code records} of the backlog's sequence to {@code topic}; the query set
   * follows the last topic produced (produce a warm-up topic first).
   */
  Produced produceBacklog(String topic, int records) {
    TelemetryGenerator gen = generator(settings.seed() + 1);
    positions.clear();
    firstEventMs = Long.MAX_VALUE;
    lastEventMs = Long.MIN_VALUE;
    long start = System.nanoTime();
    long total = 0;
    long eventTimeBase = System.currentTimeMillis() - settings.backlog() * 1000L / settings.rate();
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (int i = 0; i < records; i++) {
        long eventTime = eventTimeBase + i * 1000L / settings.rate();
        TelemetryGenerator.Record r = gen.next(eventTime);
        seen(r, eventTime);
        producer.send(new ProducerRecord<>(topic, r.id().getBytes(), r.json()));
        total += r.json().length;
      }
      producer.flush();
    }
    return new Produced(records, total, (System.nanoTime() - start) / 1_000_000, 0);
  }

  private void seen(TelemetryGenerator.Record r, long eventTime) {
    positions.add(new double[] {r.x(), r.y()});
    firstEventMs = Math.min(firstEventMs, eventTime);
    lastEventMs = Math.max(lastEventMs, eventTime);
  }

  /** The reader's query set over the input last generated or produced (fixed seed). */
  QuerySet queries() {
    return QuerySet.of(positions, firstEventMs, lastEventMs, settings.seed());
  }

  private TelemetryGenerator generator(long seed) {
    return new TelemetryGenerator(
        seed,
        settings.vehicles(),
        settings.polygonEvery(),
        settings.polygonVertices(),
        settings.generatorArea());
  }

  private KafkaProducer<byte[], byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(8 << 20));
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while producing", e);
    }
  }
}
