package org.spatialingest.source;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
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

  static Properties toProperties(Map<String, String> map) {
    Properties props = new Properties();
    props.putAll(map);
    return props;
  }
}
