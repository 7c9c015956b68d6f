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
import org.spatialingest.sink.options.ClosePolicyKind;

class JobConfigTest {
  @Test
  void defaultsAreValidAndDocumented() {
    JobConfig c = JobConfig.defaults();
    assertThat(c.topic()).isEqualTo("telemetry");
    assertThat(c.memoryBudgetBytes()).isEqualTo(128_000_000L);
    assertThat(c.maxLatency()).isEqualTo(Duration.ofSeconds(120));
    assertThat(c.closePolicy()).isEqualTo(ClosePolicyKind.BOUNDED);
    assertThat(JobConfig.KEYS)
        .containsKeys("sink.memory-budget", "sink.target-file-size", "sink.max-latency");
  }

  @Test
  void theSinkExpiresSnapshotsByDefaultUnlessIcebergsMaintenanceOrTheOperatorTakesItOver() {
    assertThat(JobConfig.defaults().maintenance().sinkExpiry())
        .isEqualTo(
            new org.spatialingest.sink.options.SnapshotExpiry(Duration.ofHours(24), 10, 100));
    assertThat(
            JobConfig.fromMap(
                    Map.of(
                        "maintenance.enabled", "true",
                        "catalog.type", "jdbc",
                        "catalog.uri", "jdbc:sqlite:/tmp/c.db"))
                .maintenance()
                .sinkExpiry())
        .as("Iceberg's maintenance expires instead")
        .isNull();
    assertThat(
            JobConfig.fromMap(Map.of("maintenance.expire-snapshots.enabled", "false"))
                .maintenance()
                .sinkExpiry())
        .isNull();
    // a freshness bound past the default max age: the sink's batch look-ups need its window
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.max-latency", "30h")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("maintenance.expire-snapshots.max-age")
        .hasMessageContaining("maintenance.expire-snapshots.enabled: false");
    assertThat(
            JobConfig.fromMap(
                    Map.of(
                        "sink.max-latency", "30h",
                        "maintenance.expire-snapshots.max-age", "48h"))
                .maintenance()
                .sinkExpiry()
                .maxAge())
        .isEqualTo(Duration.ofHours(48));
    assertThatThrownBy(
            () -> JobConfig.fromMap(Map.of("maintenance.expire-snapshots.enabled", "sometimes")))
        .hasMessageContaining("maintenance.expire-snapshots.enabled")
        .hasMessageContaining("true");
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
        .hasMessageContaining("catalog.type")
        .hasMessageContaining("hadoop, jdbc, rest");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.memory-budget", "lots")))
        .hasMessageContaining("sink.memory-budget")
        .hasMessageContaining("size > 0");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("sink.max-latency", "0s")))
        .hasMessageContaining("sink.max-latency must be > 0");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("parallelism.sink", "-1")))
        .hasMessageContaining("parallelism.sink");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("checkpoint.interval", "10 fortnights")))
        .hasMessageContaining("checkpoint.interval")
        .hasMessageContaining("unknown duration unit");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("catalog.type", "jdbc")))
        .hasMessageContaining("catalog.uri is required when catalog.type is jdbc");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("kafka.topic", " ")))
        .hasMessageContaining("kafka.topic must not be empty");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("kafka.reset-positions", "yesterday")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("kafka.reset-positions")
        .hasMessageContaining("`earliest`, `latest` or an ISO-8601 instant");
    assertThat(
            JobConfig.fromMap(Map.of("kafka.reset-positions", "2026-12-01T00:00:00Z"))
                .resetPositionsInstant())
        .isEqualTo(java.time.Instant.parse("2026-12-01T00:00:00Z"));
    assertThat(JobConfig.fromMap(Map.of("kafka.reset-positions", "Latest")).resetPositions())
        .isEqualTo("latest");
  }

  @Test
  void geometryKeysHaveDefaultsAndNameTheKeyWhenBad() {
    JobConfig d = JobConfig.defaults();
    assertThat(d.input().fileSource()).isFalse();
    assertThat(d.input().format()).isEqualTo(InputConfig.InputFormat.GEOJSON);
    assertThat(d.input().typedProperties()).isEmpty();
    assertThat(d.transform().reprojectFrom()).isNull();
    assertThat(d.transform().validate()).isTrue();
    assertThat(d.transform().repair()).isTrue();
    assertThat(d.transform().simplifyTolerance()).isZero();
    assertThat(d.transform().maxVertices()).isEqualTo(1_000_000);
    assertThat(d.transform().maxRecordBytes()).isEqualTo(16L << 20);
    assertThat(d.regions().enabled()).isFalse();

    JobConfig c =
        JobConfig.fromMap(
            Map.of(
                "source",
                "file:/data/replay",
                "input.format",
                "wkb-base64",
                "input.typed-properties",
                "speed:double, vehicle:string",
                "transform.reproject-from",
                "3857",
                "transform.simplify-method",
                "douglas-peucker",
                "regions.refresh-kind",
                "boundary_refresh"));
    assertThat(c.input().filePath()).isEqualTo("/data/replay");
    assertThat(c.input().format()).isEqualTo(InputConfig.InputFormat.WKB_BASE64);
    assertThat(c.input().typedProperties())
        .containsExactly(
            new InputConfig.TypedProperty("speed", InputConfig.PropertyType.DOUBLE),
            new InputConfig.TypedProperty("vehicle", InputConfig.PropertyType.STRING));
    assertThat(c.transform().reprojectFrom()).isEqualTo("EPSG:3857");
    assertThat(c.transform().simplifyMethod())
        .isEqualTo(TransformConfig.SimplifyMethod.DOUGLAS_PEUCKER);
    assertThat(JobConfig.fromMap(c.toMap())).isEqualTo(c);

    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("source", "s3://bucket")))
        .hasMessageContaining("source")
        .hasMessageContaining("file:<path>");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.format", "kml")))
        .hasMessageContaining("input.format")
        .hasMessageContaining("wkb-hex");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.typed-properties", "speed:decimal")))
        .hasMessageContaining("input.typed-properties")
        .hasMessageContaining("decimal")
        .hasMessageContaining("string, long, double, boolean, int, float");
    JobConfig auto =
        JobConfig.fromMap(
            Map.of(
                "input.typed-properties",
                "AUTO",
                "input.auto-columns.allow",
                "battery, heading",
                "input.auto-columns.max",
                "3"));
    assertThat(auto.input().typedProperties()).isEmpty();
    assertThat(auto.input().autoColumns())
        .isEqualTo(new InputConfig.AutoColumns(List.of("battery", "heading"), 3));
    assertThat(JobConfig.fromMap(Map.of()).input().autoColumns()).isNull();
    assertThat(JobConfig.fromMap(Map.of("input.typed-properties", "auto")).input().autoColumns())
        .isEqualTo(new InputConfig.AutoColumns(List.of(), 64));
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.auto-columns.max", "0")))
        .hasMessageContaining("input.auto-columns.max")
        .hasMessageContaining("1..1000");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.auto-columns.max", "many")))
        .hasMessageContaining("input.auto-columns.max")
        .hasMessageContaining("1..1000");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.auto-columns.allow", "Speed!")))
        .hasMessageContaining("input.auto-columns.allow")
        .hasMessageContaining("lower-case");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.typed-properties", "region:string")))
        .hasMessageContaining("input.typed-properties")
        .hasMessageContaining("already a column");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("input.typed-properties", "a:long,a:double")))
        .hasMessageContaining("declared twice");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.reproject-from", "EPSG:999999")))
        .hasMessageContaining("transform.reproject-from")
        .hasMessageContaining("does not know EPSG:999999");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.reproject-from", "mercator")))
        .hasMessageContaining("transform.reproject-from")
        .hasMessageContaining("not an EPSG code");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.validate", "yes")))
        .hasMessageContaining("transform.validate")
        .hasMessageContaining("true, false");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.validate", "false")))
        .hasMessageContaining("transform.repair needs transform.validate");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.simplify-tolerance", "-1")))
        .hasMessageContaining("transform.simplify-tolerance");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.simplify-method", "visvalingam")))
        .hasMessageContaining("transform.simplify-method")
        .hasMessageContaining("topology, douglas-peucker");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.max-vertices", "0")))
        .hasMessageContaining("transform.max-vertices");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("transform.max-record-bytes", "0")))
        .hasMessageContaining("transform.max-record-bytes must be > 0");
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("regions.partition", "true")))
        .hasMessageContaining("regions.partition needs regions.refresh-kind");
    assertThat(
            JobConfig.fromMap(Map.of("regions.partition", "true", "regions.refresh-kind", "b"))
                .regions()
                .partition())
        .isTrue();
    assertThatThrownBy(() -> JobConfig.fromMap(Map.of("regions.name-property", " ")))
        .hasMessageContaining("regions.name-property must not be empty");
  }

  @Test
  void yamlNestedAndFlatKeysPlusOverrides(@TempDir Path dir) throws Exception {
    Path yaml = dir.resolve("job.yaml");
    Files.writeString(
        yaml,
        """
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
    JobConfig c =
        ConfigLoader.load(yaml, List.of("sink.max-latency=30s", "table.partitioning=hour"));
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
