package org.spatialingest.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.RawRecord;
import org.spatialingest.source.KafkaAccessException;
import org.spatialingest.source.KafkaClients;
import org.spatialingest.tools.KafkaSampler;
import org.spatialingest.tools.RecordSampleMeasurer;
import org.spatialingest.tools.SampleFile;

/**
 * The sample paths of {@code plan}. Kept out of {@link PlanCommand} so that {@code plan
 * --bytes-per-record} never loads Flink, Iceberg or Kafka classes: this class (and through it the
 * {@code tools} package) is only loaded when a sample is measured.
 */
final class PlanSampling {
  private PlanSampling() {}

  /** What {@code plan} reports about a measured sample; plain types only. */
  record Measured(
      String source,
      long recordsRead,
      long parsed,
      Map<String, Long> rejectsByReason,
      Map<String, String> firstRejectByReason,
      double bufferedBytesPerRecord,
      OptionalDouble encodedBytesPerRecord,
      long encodedFileBytes,
      int encodedFiles,
      Topic topic) {}

  /** Topic-only figures. */
  record Topic(
      int partitions,
      Map<Integer, Integer> perPartition,
      double windowSeconds,
      long recordsInWindow,
      double offsetsRate,
      double sampleTimestampsRate) {}

  /**
   * Measures the records of {@code file} as the job configured by {@code job} parses, buffers and
   * writes them.
   */
  static Measured fromFile(Path file, boolean encode, JobConfig job) throws IOException {
    List<RawRecord> records = SampleFile.read(file);
    return measure("file:" + file, records, encode, null, job);
  }

  /**
   * Measures the newest records of {@code topic} as the job configured by {@code job} parses,
   * buffers and writes them. The consumer connects as the job does ({@code kafka.properties.*} of
   * {@code job}, {@link KafkaClients}), with {@code properties} (--consumer-property) on top.
   */
  static Measured fromTopic(
      String bootstrap,
      String topic,
      int n,
      Duration window,
      Map<String, String> properties,
      boolean encode,
      JobConfig job)
      throws IOException {
    Map<String, String> consumer = new LinkedHashMap<>(KafkaClients.connection(job));
    consumer.putAll(properties);
    KafkaSampler.TopicSample s;
    try {
      s =
          KafkaSampler.sample(
              bootstrap, topic, n, window, consumer, Duration.ofSeconds(60), Clock.systemUTC());
    } catch (RuntimeException e) {
      throw KafkaAccessException.accessFailure(e)
          .<RuntimeException>map(
              refused ->
                  new KafkaAccessException(
                      KafkaAccessException.describe(refused) + " (at " + bootstrap + ")", e))
          .orElse(e);
    }
    if (s.records().isEmpty()) {
      throw new IllegalArgumentException("topic '" + topic + "' holds no records to sample");
    }
    KafkaSampler.RateEstimate r = s.rate();
    return measure(
        "kafka:" + topic,
        s.records(),
        encode,
        new Topic(
            s.partitions(),
            s.perPartition(),
            r.windowSeconds(),
            r.recordsInWindow(),
            r.offsetsRate(),
            r.sampleTimestampsRate()),
        job);
  }

  private static Measured measure(
      String source, List<RawRecord> records, boolean encode, Topic topic, JobConfig job)
      throws IOException {
    RecordSampleMeasurer.Result m = RecordSampleMeasurer.measure(records, encode, job);
    if (m.parsed() == 0) {
      StringBuilder why = new StringBuilder();
      m.rejectsByReason()
          .forEach(
              (reason, n) ->
                  why.append(why.length() == 0 ? "" : "; ")
                      .append(reason)
                      .append(" x")
                      .append(n)
                      .append(" (first: ")
                      .append(m.firstRejectByReason().get(reason))
                      .append(')'));
      throw new IllegalArgumentException(
          "none of the "
              + m.recordsRead()
              + " records of "
              + source
              + " parse as telemetry records: "
              + why);
    }
    return new Measured(
        source,
        m.recordsRead(),
        m.parsed(),
        m.rejectsByReason(),
        m.firstRejectByReason(),
        m.bufferedBytesPerRecord(),
        m.encodedBytesPerRecord(),
        m.encodedFileBytes(),
        m.encodedFiles(),
        topic);
  }
}
