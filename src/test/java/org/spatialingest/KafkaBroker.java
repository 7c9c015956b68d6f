package org.spatialingest;

import java.util.Properties;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.spatialingest.local.EmbeddedKafka;

/**
 * A real KRaft broker for one test class: {@code @RegisterExtension static final KafkaBroker KAFKA
 * = ...}.
 */
public final class KafkaBroker implements BeforeAllCallback, AfterAllCallback {
  private EmbeddedKafka kafka;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    kafka = EmbeddedKafka.start(null);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    kafka.close();
  }

  public String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  public void createTopic(String topic, int partitions) throws Exception {
    kafka.createTopic(topic, partitions);
  }

  public Properties adminProperties() {
    return kafka.adminProperties();
  }

  /** A MiniCluster of one TaskManager with {@code slots} slots, for the same test class. */
  public static MiniClusterExtension flink(int slots) {
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(slots)
            .build());
  }
}
