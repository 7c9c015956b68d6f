package org.spatialingest.geometry;

/**
 * One sampled input record as the job's source sees it.
 *
 * @param payload the record value (a JSON record of the record contract)
 * @param ingestMillis the Kafka timestamp, which the job stores as {@code ingest_time}; {@code
 *     null} for records from a file, whose {@code ingest_time} is then taken to be their {@code
 *     event_time}
 */
public record RawRecord(byte[] payload, Long ingestMillis) {}
