package org.spatialingest.sizing;

import java.io.IOException;

/**
 * Supplies bytes per record to {@code plan}. Implementations: {@link LineSampleMeasurer} (newline-delimited file, a
 * stand-in for the sink's serialized size); a Kafka-topic sampler and a Parquet-encoding measurer plug in here.
 */
@FunctionalInterface
public interface SampleMeasurer {
  /**
   * Measures the sample.
   *
   * @throws IllegalArgumentException when the sample is unusable (empty, unreadable format); the CLI maps it to
   *     exit code 2
   * @throws IOException when reading fails
   */
  SampleMeasurement measure() throws IOException;
}
