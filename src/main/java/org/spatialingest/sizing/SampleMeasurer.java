package org.spatialingest.sizing;

import java.io.IOException;

/**
 * Supplies bytes per record from a sample, without Flink or Iceberg. Implementation: {@link LineSampleMeasurer}
 * (newline-delimited file, mean line length: a stand-in for the sink's serialized size). {@code plan} itself now measures
 * samples with the job's parser and the sink's own writer ({@code org.spatialingest.tools.RecordSampleMeasurer}),
 * which needs Flink and Iceberg and therefore lives outside this package.
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
