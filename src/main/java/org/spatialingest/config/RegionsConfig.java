package org.spatialingest.config;

import java.io.Serializable;

/**
 * Region enrichment. Records on the telemetry topic whose {@code properties.kind} equals {@code refreshKind} are
 * boundary refreshes: their polygon replaces the region named by {@code properties.<nameProperty>} in broadcast
 * state. Every row gets the name of the region containing its bbox centre (null if none).
 *
 * @param refreshKind empty = enrichment off (no extra operator, {@code region} stays null)
 */
public record RegionsConfig(String refreshKind, String nameProperty) implements Serializable {
  public boolean enabled() {
    return !refreshKind.isEmpty();
  }
}
