package org.spatialingest.sizing;

import java.util.OptionalDouble;

/**
 * Bytes per record measured from a sample, as {@code plan} consumes them.
 *
 * @param bufferedBytesPerRecord mean serialized bytes per row as the sink buffers them
 * @param encodedBytesPerRecord mean Parquet bytes per row, empty when the measurer could not encode the sample
 * @param sampleSize number of records measured
 * @param source where the sample came from, e.g. {@code file:/tmp/sample.ndjson} or {@code kafka:telemetry}
 * @param encodedBytesSource how {@code encodedBytesPerRecord} was obtained, e.g. {@code measured-parquet}
 */
public record SampleMeasurement(
    double bufferedBytesPerRecord,
    OptionalDouble encodedBytesPerRecord,
    long sampleSize,
    String source,
    String encodedBytesSource) {

  public SampleMeasurement {
    if (!(bufferedBytesPerRecord > 0) || !Double.isFinite(bufferedBytesPerRecord)) {
      throw new IllegalArgumentException("sample gives no usable bytes per record: " + bufferedBytesPerRecord);
    }
    if (sampleSize < 1) {
      throw new IllegalArgumentException("sample holds no records");
    }
    encodedBytesPerRecord = encodedBytesPerRecord == null ? OptionalDouble.empty() : encodedBytesPerRecord;
  }
}
