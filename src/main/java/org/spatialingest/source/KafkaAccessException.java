package org.spatialingest.source;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.Optional;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.spatialingest.config.Secrets;

/**
 * The brokers refused the job's credentials (authentication) or its ACLs (authorization), or could
 * not be reached at start. The message is one line that names the cause and the resource. Not
 * transient: retrying with the same credentials gives the same answer.
 */
public class KafkaAccessException extends RuntimeException {
  public KafkaAccessException(String message, Throwable cause) {
    super(Secrets.scrub(message), cause);
  }

  /** The Kafka authentication or authorization error in {@code failure}'s causes, if any. */
  public static Optional<Throwable> accessFailure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof AuthenticationException || t instanceof AuthorizationException) {
        return Optional.of(t);
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return Optional.empty();
  }

  /**
   * One line naming what the brokers refused: {@code authentication failed (...)} or {@code
   * authorization failed: topic X / group Y}.
   */
  public static String describe(Throwable accessFailure) {
    if (accessFailure instanceof SslAuthenticationException) {
      return "Kafka TLS handshake failed: " + tlsCause(accessFailure);
    }
    if (accessFailure instanceof AuthenticationException) {
      return "Kafka authentication failed (check the credentials in kafka.properties: sasl.mechanism,"
          + " sasl.jaas.config, TLS key store): "
          + Secrets.scrub(String.valueOf(accessFailure.getMessage()));
    }
    if (accessFailure instanceof TopicAuthorizationException topics
        && !topics.unauthorizedTopics().isEmpty()) {
      return "Kafka authorization failed: the job's principal is not allowed to use topic "
          + String.join(", ", topics.unauthorizedTopics())
          + " (it needs READ and DESCRIBE on the input topic, WRITE on the dead-letter topic; see"
          + " operations.md)";
    }
    if (accessFailure instanceof GroupAuthorizationException group) {
      return "Kafka authorization failed: the job's principal is not allowed to use consumer group "
          + group.groupId()
          + " (it needs READ on the group; see operations.md)";
    }
    return "Kafka authorization failed: "
        + Secrets.scrub(String.valueOf(accessFailure.getMessage()));
  }

  /**
   * What failed in a TLS handshake, in the user's terms (a certificate no CA of the truststore
   * signed, a certificate for another host name), followed by the JDK's own words.
   */
  private static String tlsCause(Throwable handshake) {
    Throwable root = handshake;
    boolean untrusted = false;
    boolean otherHost = false;
    for (Throwable t = handshake; t != null && t.getCause() != t; t = t.getCause()) {
      root = t;
      untrusted |= t instanceof CertPathBuilderException || t instanceof CertPathValidatorException;
      String m = String.valueOf(t.getMessage());
      otherHost |=
          t instanceof CertificateException
              && (m.contains("subject alternative") || m.contains("No name matching"));
    }
    String what =
        untrusted
            ? "the broker's certificate is not trusted: no CA in kafka.properties ssl.truststore.*"
                + " signed it"
            : otherHost
                ? "the broker's certificate is for another host name than the one in"
                    + " kafka.bootstrap-servers (or the broker's advertised listener)"
                : "check ssl.truststore.*, ssl.keystore.* and security.protocol in kafka.properties";
    return what + " (" + Secrets.scrub(String.valueOf(root.getMessage())) + ")";
  }
}
