package org.spatialingest.table;

import java.io.Serializable;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Told after each commit of the primary table, with the positions that commit recorded ({@link
 * TablePositions}); e.g. to publish them as a Kafka consumer group's offsets, so the group's lag is
 * what the table is missing. A failure is logged and never fails the commit.
 */
@FunctionalInterface
@PublicEvolving
public interface PositionsListener extends Serializable, AutoCloseable {
  void committed(Map<String, Long> positions) throws Exception;

  @Override
  default void close() throws Exception {}

  static PositionsListener none() {
    return positions -> {};
  }
}
