package org.spatialingest.source;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.spatialingest.config.JobConfig;

/**
 * The one place that says how the job's Kafka clients connect and authenticate: {@code
 * kafka.bootstrap-servers} plus every {@code kafka.properties.*} key (security protocol, SASL, TLS,
 * config providers). The source (and its enumerator's admin client and starting-offset lookup), the
 * group-offset publisher, the dead-letter producer, the start-up access check and {@code plan
 * --topic} all start from these properties.
 */
public final class KafkaClients {
  private KafkaClients() {}

  /** The connection and security properties of every client of the job. */
  public static Map<String, String> connection(JobConfig config) {
    Map<String, String> p = new LinkedHashMap<>(config.kafkaProperties());
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    return p;
  }

  /** {@link #connection} as {@link Properties}, for the client constructors. */
  public static Properties properties(JobConfig config) {
    return toProperties(connection(config));
  }

  /**
   * {@link #properties} with the defaults of every consumer that reads records for the table:
   * {@code isolation.level: read_committed} unless {@code kafka.properties.isolation.level} says
   * otherwise, so records of an upstream producer's aborted transactions (another Flink job writing
   * exactly-once) are never committed, and records of open ones wait until they commit.
   */
  public static Properties consumerProperties(JobConfig config) {
    return withConsumerDefaults(properties(config));
  }

  /** Adds the consumer defaults of {@link #consumerProperties} where {@code props} sets none. */
  public static Properties withConsumerDefaults(Properties props) {
    props.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return props;
  }

  static Properties toProperties(Map<String, String> map) {
    Properties props = new Properties();
    props.putAll(map);
    return props;
  }
}
