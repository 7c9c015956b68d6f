package org.spatialingest.source;

import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * The brokers kept refusing the job's credentials or ACLs while it ran (a rotated secret, a removed
 * ACL): {@link KafkaAccessGuard#ATTEMPTS} failures in a row. Flink's schedulers do not restart a
 * job for a non-recoverable error, so the job fails instead of looping under an unbounded restart
 * strategy.
 */
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class KafkaAccessLostException extends KafkaAccessException {
  public KafkaAccessLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
