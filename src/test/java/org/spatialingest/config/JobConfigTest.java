package org.spatialingest.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobConfigTest {
  @Test
  void defaultsAreValidAndDocumented() {
    JobConfig c = JobConfig.defaults();
    assertThat(c.topic()).isEqualTo("telemetry");
    assertThat(c.memoryBudgetBytes()).isEqualTo(128_000_000L);
    assertThat(c.maxLatency()).isEqualTo(Duration.ofSeconds(120));
    assertThat(c.closePolicy()).isEqualTo(JobConfig.ClosePolicyKind.BOUNDED);
    assertThat(JobConfig.KEYS).containsKeys("sink.memory-budget", "sink.target-file-size", "sink.max-latency");
  }

  @Test
  void unknownKeyNamesTheKeyAndTheAllowedOnes() {
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.max-latencyy", "10s")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'sink.max-latencyy'")
        .hasMessageContaining("sink.max-latency,");
  }

  @Test
  void badValuesNameTheKeyAndWhatIsAllowed() {
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("catalog.type", "hive")))
        .hasMessageContaining("catalog.type").hasMessageContaining("hadoop, jdbc, rest");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.memory-budget", "lots")))
        .hasMessageContaining("sink.memory-budget").hasMessageContaining("size > 0");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.max-latency", "0s")))
        .hasMessageContaining("sink.max-latency must be > 0");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("parallelism.sink", "-1")))
        .hasMessageContaining("parallelism.sink");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("checkpoint.interval", "10 fortnights")))
        .hasMessageContaining("checkpoint.interval").hasMessageContaining("unknown duration unit");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("catalog.type", "jdbc")))
        .hasMessageContaining("catalog.uri is required when catalog.type is jdbc");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("kafka.topic", " ")))
        .hasMessageContaining("kafka.topic must not be empty");
  }

  @Test
  void yamlNestedAndFlatKeysPlusOverrides(@TempDir Path dir) throws Exception {
    Path yaml = dir.resolve("job.yaml");
    Files.writeString(yaml, """
        kafka:
          bootstrap-servers: broker:9092
          properties:
            security.protocol: SASL_SSL
        sink.target-file-size: 256MiB
        sink:
          max-latency: 2m
        catalog:
          type: jdbc
          uri: jdbc:sqlite:/tmp/c.db
        """);
    JobConfig c = ConfigLoader.load(yaml, List.of("sink.max-latency=30s", "table.partitioning=hour"));
    assertThat(c.bootstrapServers()).isEqualTo("broker:9092");
    assertThat(c.kafkaProperties()).containsEntry("security.protocol", "SASL_SSL");
    assertThat(c.targetFileBytes()).isEqualTo(256L << 20);
    assertThat(c.maxLatency()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.partitioning()).isEqualTo(JobConfig.TimePartitioning.HOUR);
    assertThat(c.catalogType()).isEqualTo(JobConfig.CatalogType.JDBC);
    assertThat(JobConfig.fromMap(c.toMap())).isEqualTo(c);
  }

  @Test
  void malformedOverrideAndMissingFileAreClear(@TempDir Path dir) {
    assertThatThrownBy(() -> ConfigLoader.load(null, List.of("sink.max-latency")))
        .hasMessageContaining("must look like key=value");
    assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("nope.yaml"), List.of()))
        .hasMessageContaining("does not exist");
  }
}
