package org.spatialingest.geometry;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.table.data.GenericRowData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.FileSample;

/**
 * The rows of a bounded file input's sample that the distribution step starts its key ranges from
 * ({@code sink.distribution: range}): {@link FileSample} reads the records where the job is built,
 * and {@link SampleParse#parse} parses them with the job's own parser (as {@code plan --sample}
 * does), so each row has the Hilbert key and the time partition the job gives it. A failure (an
 * unreadable input, no record that parses) never fails the job: it is logged, and the job starts
 * without a sample, its first rows waiting for the early merge as on Kafka.
 */
public final class BoundedInputSample {
  private static final Logger LOG = LoggerFactory.getLogger(BoundedInputSample.class);

  private BoundedInputSample() {}

  /**
   * Sampled rows.
   *
   * @param rows telemetry-table rows of the sampled records that parse
   * @param rowsPerSampledRow the input's records per sampled record (rejects taken to be as common
   *     in the input as in the sample)
   */
  public record Rows(List<GenericRowData> rows, double rowsPerSampledRow) {}

  /** The sample of {@code config}'s file input ({@code source: file:<path>}), if one parses. */
  public static Optional<Rows> read(JobConfig config) {
    return read(config, Set.of());
  }

  /**
   * The same of the files this run reads: without {@code committedWhole} (the input's files it does
   * not read, {@code FileStartCheck#committedWhole}); none when it reads none.
   */
  public static Optional<Rows> read(JobConfig config, Set<String> committedWhole) {
    String path = config.input().filePath();
    long start = System.nanoTime();
    try {
      FileSample.Sample sample = FileSample.read(path, committedWhole);
      if (sample.files() == 0 && !committedWhole.isEmpty()) {
        LOG.info("no input file of {} is read: nothing to sample", path);
        return Optional.empty();
      }
      List<RawRecord> records =
          sample.records().stream().map(r -> new RawRecord(r.value, r.timestamp)).toList();
      SampleParse.Parsed parsed = SampleParse.parse(records, config);
      long millis = (System.nanoTime() - start) / 1_000_000;
      if (parsed.rows().isEmpty()) {
        LOG.warn(
            "input sample of {}: none of its {} records parses (rejects by reason: {}) in {} ms;"
                + " the first rows wait for the early merge of the key ranges",
            path,
            records.size(),
            parsed.rejectsByReason(),
            millis);
        return Optional.empty();
      }
      LOG.info(
          "input sample for the first key ranges: {} of about {} records of {} ({} files, {} bytes,"
              + " {} bytes read), {} rows, {} rejected, in {} ms",
          records.size(),
          sample.estimatedRecords(),
          path,
          sample.files(),
          sample.inputBytes(),
          sample.bytesRead(),
          parsed.rows().size(),
          records.size() - parsed.rows().size(),
          millis);
      return Optional.of(
          new Rows(parsed.rows(), sample.estimatedRecords() / (double) records.size()));
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "could not sample the input {} ({}); the first rows wait for the early merge of the key"
              + " ranges",
          path,
          e.toString(),
          e);
      return Optional.empty();
    }
  }
}
