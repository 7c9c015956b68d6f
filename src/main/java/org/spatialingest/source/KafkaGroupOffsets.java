package org.spatialingest.source;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.PositionsListener;
import org.spatialingest.table.SourceKeys;

/**
 * Publishes the table's positions as the consumer group's committed offsets after every commit, so
 * the group's lag is what the table is still missing (the Kafka source's own offset commits, which
 * run ahead of the table by up to the freshness bound, are switched off). The source assigns
 * partitions without joining the group, so the group has no members and its offsets can be set from
 * here.
 *
 * <p>Asynchronous: the committer never waits for the broker. A broker outage made each commit wait
 * up to 30 s for this publication, which held the committer and thereby the next checkpoints, and
 * broke the freshness bound of rows that need no broker to be committed (found by the chaos run).
 * At most one publication is in flight; positions are complete maps, so only the newest waiting one
 * is sent next; a failed one is sent again after a pause unless a newer one waits by then.
 */
public final class KafkaGroupOffsets implements PositionsListener {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaGroupOffsets.class);
  private static final Duration RETRY_DELAY = Duration.ofSeconds(5);
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
  private final Map<String, String> connection;
  private final String groupId;
  private final String topic;
  private transient Admin admin;

  /** the newest positions not yet sent; null when none wait */
  private transient Map<TopicPartition, OffsetAndMetadata> waiting;

  private transient boolean inFlight;
  private transient boolean closed;

  /**
   * @param connection the job's client properties ({@link KafkaClients#connection})
   */
  public KafkaGroupOffsets(Map<String, String> connection, String groupId, String topic) {
    this.connection = new HashMap<>(connection);
    this.groupId = groupId;
    this.topic = topic;
  }

  @Override
  public void committed(Map<String, Long> positions) {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    positions.forEach(
        (key, position) -> {
          if (!SourceKeys.isFile(key) && SourceKeys.topic(key).equals(topic)) {
            offsets.put(
                new TopicPartition(topic, SourceKeys.partition(key)),
                new OffsetAndMetadata(position));
          }
        });
    if (offsets.isEmpty()) {
      return;
    }
    synchronized (this) {
      waiting = offsets;
      if (!inFlight) {
        sendWaiting();
      }
    }
  }

  /** Sends the waiting positions, if any; called with the lock held. */
  private void sendWaiting() {
    Map<TopicPartition, OffsetAndMetadata> offsets = waiting;
    waiting = null;
    inFlight = offsets != null && !closed;
    if (!inFlight) {
      notifyAll();
      return;
    }
    if (admin == null) {
      admin = Admin.create(KafkaClients.toProperties(connection));
    }
    admin
        .alterConsumerGroupOffsets(groupId, offsets)
        .all()
        .whenComplete(
            (ignored, error) -> {
              synchronized (this) {
                if (error != null) {
                  LOG.warn(
                      "Could not set the offsets of consumer group {} to the table's positions (the table is the record;"
                          + " sent again): {}",
                      groupId,
                      error.toString());
                  if (waiting == null) {
                    waiting = offsets;
                  }
                  inFlight = false;
                  notifyAll();
                  CompletableFuture.delayedExecutor(RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS)
                      .execute(
                          () -> {
                            synchronized (this) {
                              if (!inFlight) {
                                sendWaiting();
                              }
                            }
                          });
                  return;
                }
                sendWaiting();
              }
            });
  }

  /**
   * Publishes what still waits (a bounded job's last positions), after the publication in flight,
   * briefly.
   */
  @Override
  public void close() throws InterruptedException {
    Map<TopicPartition, OffsetAndMetadata> last;
    Admin toClose;
    synchronized (this) {
      long deadline = System.currentTimeMillis() + CLOSE_WAIT.toMillis();
      while (inFlight && System.currentTimeMillis() < deadline) {
        wait(100);
      }
      closed = true;
      last = inFlight ? null : waiting;
      waiting = null;
      toClose = admin;
      admin = null;
    }
    if (toClose == null) {
      return;
    }
    try {
      if (last != null) {
        toClose
            .alterConsumerGroupOffsets(groupId, last)
            .all()
            .get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (Exception e) {
      LOG.warn(
          "Could not set the offsets of consumer group {} to the table's last positions: {}",
          groupId,
          e.toString());
    } finally {
      toClose.close(CLOSE_WAIT);
    }
  }
}
