package org.spatialingest.config;

import java.io.Serializable;

/**
 * Region enrichment. Records on the telemetry topic whose {@code properties.kind} equals {@code
 * refreshKind} are boundary refreshes: their polygon replaces the region named by {@code
 * properties.<nameProperty>} in broadcast state. Every row gets the name of the region containing
 * its bbox centre (null if none).
 *
 * @param refreshKind empty = enrichment off (no extra operator, {@code region} stays null)
 * @param partition also partition the table by {@code region} (identity, after the time): only for
 *     a handful of regions; each open (time, region) pair is a buffer of its own ({@code
 *     sink.max-open-partitions})
 * @param bootstrap a file of boundary refresh records (the job's input format, one per line) loaded
 *     before the first row is enriched, or empty; refreshes from the stream replace them when newer
 */
public record RegionsConfig(
    String refreshKind, String nameProperty, boolean partition, String bootstrap)
    implements Serializable {
  public boolean enabled() {
    return !refreshKind.isEmpty();
  }
}
