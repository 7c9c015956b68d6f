package org.spatialingest.geometry;

import org.apache.flink.table.data.GenericRowData;

/**
 * What {@link TelemetryParser#parse} made of one record.
 *
 * @param row the telemetry-table row (without its source columns, which the transform sets)
 * @param eventMillis the record's {@code event_time} in epoch millis
 * @param refreshRegion the region this record refreshes ({@code regions.refresh-kind}), or null
 * @param repaired the geometry was invalid and {@code GeometryFixer} repaired it
 * @param simplified simplification removed vertices
 */
public record ParsedRow(
    GenericRowData row,
    long eventMillis,
    String refreshRegion,
    boolean repaired,
    boolean simplified) {}
