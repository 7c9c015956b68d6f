package org.spatialingest.table;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * The table's positions say the job cannot go on without losing or repeating records silently:
 * another Kafka cluster, positions that cannot be found, records deleted from Kafka before they
 * were committed ({@code kafka.on-gap: fail}), a table rolled back under the sink. The message
 * names the case and the ways out. Flink does not restart a job for it (restarting cannot help),
 * and {@code run} exits 3.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public class PositionsRefusedException extends IllegalStateException {
  public PositionsRefusedException(String message) {
    super(message);
  }
}
