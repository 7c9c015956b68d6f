/**
 * Measurement behind the CLI tools that need Flink, Iceberg or Kafka classes: sample parsing and
 * Parquet encoding through the sink's own code ({@code plan --sample/--topic}; the job parses the
 * sample of a bounded file input the same way: {@link org.spatialingest.geometry.SampleParse}), the
 * Kafka sampler, and reading tables for {@code estimate-tasks --table}, {@code verify} and {@code
 * inspect}. The pure math stays in {@link org.spatialingest.sizing}, which loads none of these
 * libraries, so {@code plan --bytes-per-record} starts fast.
 */
package org.spatialingest.tools;
