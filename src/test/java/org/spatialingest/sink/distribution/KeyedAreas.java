package org.spatialingest.sink.distribution;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Kafka topic keyed by vehicle where each partition's vehicles live in another area, as with a
 * fleet keyed by vehicle across regions: each source subtask sees one area only. Used by {@link
 * GlobalRangesTest} and the distribution benchmark.
 */
public final class KeyedAreas {
  private KeyedAreas() {}

  /**
   * One area per Kafka partition, 6° × 6°, spread over the globe: each in the middle of a cell of
   * the curve's fourth level (22.5° × 11.25°), so its keys form one run (an area across a cell edge
   * splits into runs far apart on the curve: a compactness matter of the curve, not of the ranges
   * this test is about).
   */
  public static final double[][] CENTRES = {
    {cellCentreX(2), cellCentreY(11)},
    {cellCentreX(4), cellCentreY(6)},
    {cellCentreX(7), cellCentreY(12)},
    {cellCentreX(8), cellCentreY(8)},
    {cellCentreX(9), cellCentreY(4)},
    {cellCentreX(11), cellCentreY(10)},
    {cellCentreX(13), cellCentreY(9)},
    {cellCentreX(14), cellCentreY(5)}
  };

  private static double cellCentreX(int column) {
    return -180 + 22.5 * (column + 0.5);
  }

  private static double cellCentreY(int row) {
    return -90 + 11.25 * (row + 0.5);
  }

  /** Vehicles moving inside their partition's area, keyed by vehicle; returns the rows sent. */
  public static int produce(String bootstrap, String topic, int rowsPerPartition) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "300000");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    Random random = new Random(28);
    long t0 = System.currentTimeMillis() - 60_000;
    int vehiclesPerArea = 10;
    List<Future<RecordMetadata>> acks = new ArrayList<>();
    int sent = 0;
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int area = 0; area < CENTRES.length; area++) {
        double[][] at = new double[vehiclesPerArea][2];
        for (double[] v : at) {
          v[0] = CENTRES[area][0] + (random.nextDouble() - 0.5) * 6;
          v[1] = CENTRES[area][1] + (random.nextDouble() - 0.5) * 6;
        }
        for (int i = 0; i < rowsPerPartition; i++) {
          int vehicle = i % vehiclesPerArea;
          double[] v = at[vehicle];
          v[0] += (random.nextDouble() - 0.5) * 0.02;
          v[1] += (random.nextDouble() - 0.5) * 0.02;
          String id = "a" + area + "-" + i;
          String json = point(id, t0 + i * 10L, v[0], v[1], "v" + area + "-" + vehicle);
          acks.add(
              producer.send(
                  new ProducerRecord<>(
                      topic,
                      area,
                      ("v" + area + "-" + vehicle).getBytes(StandardCharsets.UTF_8),
                      json.getBytes(StandardCharsets.UTF_8))));
          sent++;
        }
      }
    }
    for (Future<RecordMetadata> ack : acks) {
      ack.get();
    }
    return sent;
  }

  public static String point(String id, long eventMillis, double x, double y, String vehicle) {
    return String.format(
        Locale.ROOT,
        "{\"id\":\"%s\",\"event_time\":\"%s\",\"geometry\":{\"type\":\"Point\",\"coordinates\":"
            + "[%.6f,%.6f]},\"properties\":{\"vehicle\":\"%s\"}}",
        id,
        Instant.ofEpochMilli(eventMillis),
        x,
        y,
        vehicle);
  }

  /**
   * Prints each area's key interval and, per file, its key interval, rows and the areas whose
   * intervals it overlaps: which writer's file took a sliver of another area, run by run.
   */
  public static void describe(Table table, List<DataFile> files) throws Exception {
    long[][] interval = new long[CENTRES.length][];
    for (int a = 0; a < CENTRES.length; a++) {
      interval[a] = new long[] {Long.MAX_VALUE, Long.MIN_VALUE};
    }
    try (CloseableIterable<Record> rows =
        IcebergGenerics.read(table).select("id", "hilbert").build()) {
      for (Record r : rows) {
        String id = (String) r.getField("id");
        int a = Integer.parseInt(id.substring(1, id.indexOf('-')));
        long key = (Long) r.getField("hilbert");
        interval[a][0] = Math.min(interval[a][0], key);
        interval[a][1] = Math.max(interval[a][1], key);
      }
    }
    for (int a = 0; a < CENTRES.length; a++) {
      System.out.printf(Locale.ROOT, "area %d: keys %d..%d%n", a, interval[a][0], interval[a][1]);
    }
    for (DataFile f : files) {
      long lo = TableFiles.bound(f, true);
      long hi = TableFiles.bound(f, false);
      StringBuilder areas = new StringBuilder();
      for (int a = 0; a < CENTRES.length; a++) {
        if (lo <= interval[a][1] && hi >= interval[a][0]) {
          areas.append(' ').append(a);
        }
      }
      System.out.printf(
          Locale.ROOT, "file: %d rows, keys %d..%d, areas%s%n", f.recordCount(), lo, hi, areas);
    }
  }
}
