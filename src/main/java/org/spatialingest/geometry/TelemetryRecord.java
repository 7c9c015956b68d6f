package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.locationtech.jts.geom.Coordinate;

/**
 * A record's top-level fields as {@link RecordReader} found them, id and time already checked.
 *
 * @param id the record's id (a feature's integer id as its decimal text)
 * @param eventMillis {@code event_time} (a feature's {@code properties.event_time}) in epoch millis
 * @param geometry the {@code geometry} value, not yet read; null when the field is missing or
 *     {@code point} is set
 * @param point the position of a simple GeoJSON point geometry, read while streaming the record;
 *     else null
 * @param properties the {@code properties} object as a tree, or null when absent, JSON null or kept
 *     as text
 * @param rawProperties the {@code properties} object's original text when nothing needs to look
 *     inside it, else null
 */
record TelemetryRecord(
    String id,
    long eventMillis,
    JsonNode geometry,
    Coordinate point,
    ObjectNode properties,
    String rawProperties) {}
