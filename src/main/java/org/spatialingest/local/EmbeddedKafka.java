package org.spatialingest.local;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft Kafka broker (combined broker + controller) in this JVM, on a free
 * localhost port. Kafka's own cluster test kit does the storage formatting and listener wiring;
 * nothing is mocked.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final KafkaClusterTestKit cluster;

  private EmbeddedKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /**
   * Starts a broker whose data lives under {@code baseDir} (or a temporary directory when null).
   */
  public static EmbeddedKafka start(Path baseDir) throws Exception {
    TestKitNodes.Builder nodes =
        new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1);
    if (baseDir != null) {
      nodes.setBaseDirectory(baseDir);
    }
    KafkaClusterTestKit cluster =
        new KafkaClusterTestKit.Builder(nodes.build())
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setConfigProp("auto.create.topics.enable", "false")
            .build();
    PrintStream stdout = System.out;
    try {
      System.setOut(
          new PrintStream(
              OutputStream.nullOutputStream())); // the storage formatter prints to stdout
      cluster.format();
    } finally {
      System.setOut(stdout);
    }
    cluster.startup();
    cluster.waitForReadyBrokers();
    return new EmbeddedKafka(cluster);
  }

  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * Creates a topic that accepts records up to 16 MiB (polygon refreshes can exceed Kafka's 1 MB
   * default).
   */
  public void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(adminProperties())) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, partitions, (short) 1)
                      .configs(Map.of("max.message.bytes", Integer.toString(16 << 20)))))
          .all()
          .get();
      awaitLeaders(admin, topic, partitions);
    }
  }

  /**
   * Topic creation returns before every partition has a leader; producers started earlier can
   * stall.
   */
  private static void awaitLeaders(Admin admin, String topic, int partitions) throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    while (System.currentTimeMillis() < deadline) {
      TopicDescription d;
      try {
        d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
          throw e;
        }
        d = null; // metadata not propagated yet
      }
      if (d != null
          && d.partitions().size() == partitions
          && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
        return;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException(
        "topic " + topic + " has no leader for every partition after 30 s");
  }

  public Properties adminProperties() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    return p;
  }

  /**
   * Stops the broker while its KRaft controller keeps running: clients see the broker gone, as in a
   * broker outage. {@link #startBroker()} brings it back on the same port with its data.
   */
  public void stopBroker() {
    for (BrokerServer broker : cluster.brokers().values()) {
      broker.shutdown();
      broker.awaitShutdown();
    }
  }

  public void startBroker() throws Exception {
    for (BrokerServer broker : cluster.brokers().values()) {
      broker.startup();
    }
    cluster.waitForReadyBrokers();
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
