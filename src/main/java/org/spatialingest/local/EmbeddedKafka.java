package org.spatialingest.local;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real single-node KRaft Kafka broker (combined broker + controller) in this JVM, on a free localhost port.
 * Kafka's own cluster test kit does the storage formatting and listener wiring; nothing is mocked.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final KafkaClusterTestKit cluster;

  private EmbeddedKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /** Starts a broker whose data lives under {@code baseDir} (or a temporary directory when null). */
  public static EmbeddedKafka start(Path baseDir) throws Exception {
    TestKitNodes.Builder nodes = new TestKitNodes.Builder()
        .setCombined(true)
        .setNumBrokerNodes(1)
        .setNumControllerNodes(1);
    if (baseDir != null) {
      nodes.setBaseDirectory(baseDir);
    }
    KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(nodes.build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("auto.create.topics.enable", "false")
        .build();
    PrintStream stdout = System.out;
    try {
      System.setOut(new PrintStream(OutputStream.nullOutputStream())); // the storage formatter prints to stdout
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

  public void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(adminProperties())) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    }
  }

  public Properties adminProperties() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    return p;
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
