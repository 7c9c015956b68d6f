package org.spatialingest.source;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.Secrets;

/**
 * Checks once, where the job is built, that the brokers accept the job's credentials and ACLs, so a
 * wrong password or a missing ACL stops the start with one line naming the cause instead of a job
 * that restarts for ever. Asks only what the job's principal needs anyway (see operations.md):
 *
 * <ul>
 *   <li>describe {@code kafka.topic}, with the operations the principal may perform on it: READ;
 *   <li>the offsets of {@code kafka.group-id} (DESCRIBE, implied by READ) and the operations on the
 *       group: READ (the sink publishes the table's positions as the group's offsets);
 *   <li>with {@code rejects.dead-letter-topic}: describe it, WRITE among the operations — checked
 *       without writing a record.
 * </ul>
 *
 * Each call has a time-out of {@link #CALL_TIMEOUT}; the first refusal or time-out ends the check.
 */
public final class KafkaAccessCheck {
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);
  private static final Logger LOG = LoggerFactory.getLogger(KafkaAccessCheck.class);

  private KafkaAccessCheck() {}

  /** Throws a {@link KafkaAccessException} with one line naming the cause when access fails. */
  public static void verify(JobConfig config) {
    long start = System.nanoTime();
    Properties props = KafkaClients.properties(config);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) CALL_TIMEOUT.toMillis());
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) CALL_TIMEOUT.toMillis() / 2);
    // Kafka's default back-off, not the job's: a back-off tuned for the job's clients (seconds)
    // would hold the start for that long on the first retried metadata call; the check's calls
    // have their own time-outs
    props.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 100);
    props.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 1_000);
    props.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "spatial-ingest-access-check");
    Admin admin;
    try {
      admin = Admin.create(props);
    } catch (KafkaException e) {
      throw new KafkaAccessException(
          "Kafka client configuration refused (kafka.properties.*): " + rootMessage(e), e);
    }
    try (admin) {
      String topic = config.topic();
      requireOperation(
          topic(admin, config, topic, "kafka.topic", "READ and DESCRIBE"),
          AclOperation.READ,
          "topic",
          topic);
      String group = config.groupId();
      String groupLabel = "consumer group " + group + " (it needs READ on it)";
      call(
          config,
          groupLabel,
          () -> admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
      requireOperation(
          groupOperations(admin, config, group, groupLabel),
          AclOperation.READ,
          "consumer group",
          group);
      String deadLetters = config.deadLetterTopic();
      if (!deadLetters.isEmpty()) {
        requireOperation(
            topic(admin, config, deadLetters, "rejects.dead-letter-topic", "WRITE"),
            AclOperation.WRITE,
            "topic",
            deadLetters);
      }
    }
    LOG.info(
        "Kafka access checked in {} ms: the brokers at {} accept the job's credentials; READ on topic"
            + " {} and group {}{}",
        (System.nanoTime() - start) / 1_000_000,
        config.bootstrapServers(),
        config.topic(),
        config.groupId(),
        config.deadLetterTopic().isEmpty() ? "" : ", WRITE on topic " + config.deadLetterTopic());
  }

  /** The operations the principal may perform on {@code topic} (null: the broker did not say). */
  private static Set<AclOperation> topic(
      Admin admin, JobConfig config, String topic, String key, String needs) {
    try {
      TopicDescription d =
          call(
                  config,
                  "topic " + topic + " (it needs " + needs + " on it)",
                  () ->
                      admin
                          .describeTopics(
                              List.of(topic),
                              new DescribeTopicsOptions().includeAuthorizedOperations(true))
                          .allTopicNames())
              .get(topic);
      return d.authorizedOperations();
    } catch (KafkaAccessException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw new KafkaAccessException(
            "Kafka topic "
                + topic
                + " does not exist at "
                + config.bootstrapServers()
                + " ("
                + key
                + ")",
            e.getCause());
      }
      throw e;
    }
  }

  /**
   * The operations the principal may perform on {@code group}; null when the group does not exist
   * yet (the broker then reports none: its offsets could be listed, so DESCRIBE is granted).
   */
  private static Set<AclOperation> groupOperations(
      Admin admin, JobConfig config, String group, String label) {
    try {
      ConsumerGroupDescription d =
          call(
                  config,
                  label,
                  () ->
                      admin
                          .describeConsumerGroups(
                              List.of(group),
                              new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true))
                          .all())
              .get(group);
      return d == null ? null : d.authorizedOperations();
    } catch (KafkaAccessException e) {
      if (e.getCause() instanceof GroupIdNotFoundException) {
        return null;
      }
      throw e;
    }
  }

  private static void requireOperation(
      Set<AclOperation> allowed, AclOperation needed, String kind, String name) {
    if (allowed == null || allowed.isEmpty()) {
      return; // the broker does not report operations (no authorizer): nothing to check
    }
    if (!allowed.contains(needed) && !allowed.contains(AclOperation.ALL)) {
      throw new KafkaAccessException(
          "Kafka authorization failed: the job's principal may not "
              + needed
              + " "
              + kind
              + " "
              + name
              + " (allowed: "
              + allowed
              + "; see operations.md for the ACLs the job needs)",
          null);
    }
  }

  private interface Call<V> {
    KafkaFuture<V> start();
  }

  /**
   * @param resource what is asked for, named in the message when the broker refuses it
   */
  private static <V> V call(JobConfig config, String resource, Call<V> call) {
    try {
      return call.start().get(CALL_TIMEOUT.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaAccessException("interrupted while checking Kafka access", e);
    } catch (java.util.concurrent.TimeoutException e) {
      throw unreachable(config, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      var refused = KafkaAccessException.accessFailure(cause);
      if (refused.isPresent()) {
        String line =
            refused.get() instanceof AuthenticationException
                ? KafkaAccessException.describe(refused.get())
                : "Kafka authorization failed: the job's principal may not use " + resource;
        throw new KafkaAccessException(line + " at " + config.bootstrapServers(), cause);
      }
      if (cause instanceof TimeoutException) {
        throw unreachable(config, cause);
      }
      throw new KafkaAccessException(
          "Kafka at "
              + config.bootstrapServers()
              + " refused the access check: "
              + rootMessage(cause),
          cause);
    }
  }

  private static KafkaAccessException unreachable(JobConfig config, Throwable cause) {
    return new KafkaAccessException(
        "Kafka at "
            + config.bootstrapServers()
            + " did not answer within "
            + CALL_TIMEOUT.toSeconds()
            + " s (check kafka.bootstrap-servers and kafka.properties.security.protocol)",
        cause);
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m =
        root == t ? String.valueOf(t.getMessage()) : t.getMessage() + ": " + root.getMessage();
    return Secrets.scrub(m);
  }
}
