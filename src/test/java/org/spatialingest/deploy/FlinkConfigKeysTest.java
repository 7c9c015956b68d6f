package org.spatialingest.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks that {@code flink-conf/config.yaml} and every {@code flinkConfiguration} map of the
 * rendered k8s overlays (FlinkDeployment and FlinkSessionJob) use only configuration keys that
 * Flink 2.1 knows, that the values parse with the option's type, and that no deprecated key is
 * used.
 *
 * <p>Known keys come from Flink's own ConfigOption declarations on the test classpath ({@link
 * FlinkOptionsCatalog}: flink-core/runtime/streaming/clients 2.1.3, statebackends, and
 * flink-kubernetes 2.1.0 for the Kubernetes HA options). {@code config.yaml} is read by {@link
 * GlobalConfiguration#loadConfiguration(String)} (Flink 2.x standard-YAML parser), the manifests'
 * maps by {@link Configuration#fromMap(Map)}.
 *
 * <p>Keys that belong to code not on this classpath are accepted only if listed in {@link
 * #ALLOWED}, each with its reason. The list holds exact keys (no prefixes), so typos are still
 * caught. What this cannot check: values of allow-listed keys, and whether the operator/plugins
 * accept them.
 */
class FlinkConfigKeysTest {

  /** Exact keys not declared by Flink 2.1's own modules on this classpath -> why they are valid. */
  static final Map<String, String> ALLOWED = new LinkedHashMap<>();

  static {
    String autoscaler =
        "Flink Kubernetes Operator 1.13 autoscaler option (AutoScalerOptions, documented in "
            + "the operator's auto_scaler_configuration); the autoscaler runs in the operator, not in Flink";
    for (String k :
        List.of(
            "enabled",
            "scaling.enabled",
            "utilization.target",
            "utilization.min",
            "utilization.max",
            "metrics.window",
            "stabilization.interval",
            "catch-up.duration",
            "restart.time",
            "scale-up.max-factor",
            "scale-down.interval",
            "vertex.max-parallelism")) {
      ALLOWED.put("job.autoscaler." + k, autoscaler);
    }
    String operator =
        "Flink Kubernetes Operator 1.13 option (KubernetesOperatorConfigOptions, dynamic section of "
            + "the operator docs); read by the operator from flinkConfiguration";
    ALLOWED.put("kubernetes.operator.job.savepoint-on-deletion", operator);
    ALLOWED.put("kubernetes.operator.savepoint.history.max.count", operator);
    ALLOWED.put("kubernetes.operator.periodic.savepoint.interval", operator);
    ALLOWED.put(
        "metrics.reporter.prom.port",
        "PrometheusReporter parameter, read by the flink-metrics-prometheus "
            + "plugin (2.1.x of it is not served by Maven Central here; Flink core only declares the generic "
            + "metrics.reporter.<name>.<parameter> catch-all, which FlinkOptionsCatalog deliberately ignores)");
    String s3 =
        "flink-s3-fs-hadoop plugin key: Flink forwards s3.* to fs.s3a.* (plugin not on this classpath)";
    ALLOWED.put("s3.endpoint", s3);
    ALLOWED.put("s3.path.style.access", s3);
  }

  static FlinkOptionsCatalog catalog;

  @BeforeAll
  static void scan() {
    catalog = FlinkOptionsCatalog.fromClasspath();
    // the scan must have found the option classes our keys live in; a silent empty scan would pass
    // anything
    assertThat(catalog.scannedClasses)
        .contains(
            "CheckpointingOptions",
            "StateBackendOptions",
            "RestartStrategyOptions",
            "MetricOptions",
            "HighAvailabilityOptions",
            "JobManagerOptions",
            "TaskManagerOptions",
            "PipelineOptions",
            "RestOptions",
            "WebOptions",
            "CoreOptions",
            "KubernetesHighAvailabilityOptions");
    assertThat(catalog.options).hasSizeGreaterThan(500);
  }

  @Test
  void clusterConfigYamlUsesOnlyKnownKeys() {
    Configuration conf =
        GlobalConfiguration.loadConfiguration(Path.of("flink-conf").toAbsolutePath().toString());
    assertThat(conf.keySet())
        .contains(
            "execution.checkpointing.interval",
            "state.backend.type",
            "metrics.reporter.prom.factory.class",
            "pipeline.max-parallelism");
    assertThat(problems("flink-conf/config.yaml", conf)).isEmpty();
    // not silently absent: allow-list entries are the only exceptions
    assertThat(conf.toMap())
        .containsEntry("web.submit.enable", "false")
        .containsEntry("state.backend.type", "hashmap");
  }

  @Test
  void everyFlinkConfigurationInTheManifestsUsesOnlyKnownKeys() {
    int maps = 0;
    for (Map.Entry<String, List<ObjectNode>> overlay : ManifestSchemaTest.renderAll().entrySet()) {
      for (ObjectNode o : overlay.getValue()) {
        JsonNode fc = o.path("spec").path("flinkConfiguration");
        if (!fc.isObject()) continue;
        Map<String, String> m = new LinkedHashMap<>();
        fc.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        String where =
            overlay.getKey()
                + ":"
                + o.path("kind").asText()
                + "/"
                + o.path("metadata").path("name").asText();
        assertThat(problems(where, Configuration.fromMap(m))).isEmpty();
        maps++;
      }
    }
    assertThat(maps)
        .as("flinkConfiguration maps checked")
        .isEqualTo(4); // dev, prod, session deployment + session job
  }

  @Test
  void allowListHasNoStaleOrShadowingEntries() {
    for (String k : ALLOWED.keySet()) {
      assertThat(catalog.isKnown(k))
          .as("%s is declared by Flink itself; drop it from ALLOWED", k)
          .isFalse();
    }
  }

  @Test
  void keysRemovedFromFlinkAreRejected(@TempDir Path dir) throws IOException {
    // gone in Flink 2.x (no option or fallback key declares them any more)
    Files.writeString(
        dir.resolve("config.yaml"),
        String.join(
            "\n",
            "state.backend.async: true",
            "taskmanager.heap.size: 1g",
            "jobmanager.heap.size: 1g",
            "execution.checkpointing.interval: 10s",
            ""));
    Configuration conf = GlobalConfiguration.loadConfiguration(dir.toString());
    assertThat(problems("negative", conf))
        .hasSize(3)
        .anySatisfy(p -> assertThat(p).contains("state.backend.async"))
        .anySatisfy(p -> assertThat(p).contains("taskmanager.heap.size"))
        .anySatisfy(p -> assertThat(p).contains("jobmanager.heap.size"));
  }

  @Test
  void deprecatedOneXKeysAreFlagged() {
    // Still *known* to 2.1 (deprecated fallback keys), so they would work today, but they are on
    // their way
    // out; our files must use the new names.
    Configuration conf =
        Configuration.fromMap(
            Map.of(
                "state.backend", "hashmap",
                "taskmanager.network.memory.fraction", "0.1",
                "state.checkpoints.dir", "file:///tmp/x",
                "restart-strategy", "exponential-delay"));
    List<String> p = problems("deprecated", conf);
    assertThat(p).hasSize(4).allSatisfy(x -> assertThat(x).contains("deprecated"));
  }

  @Test
  void badValuesAreRejected() {
    Configuration conf =
        Configuration.fromMap(
            Map.of(
                "execution.checkpointing.interval",
                "ten seconds",
                "pipeline.max-parallelism",
                "lots"));
    assertThat(problems("values", conf)).hasSize(2);
  }

  @Test
  void typosAreRejectedDespiteTheAllowList() {
    Configuration conf =
        Configuration.fromMap(
            Map.of(
                "job.autoscaler.utilisation.target",
                "0.7",
                "metrics.reporter.prom.prot",
                "9249",
                "execution.checkpointing.intervall",
                "10s"));
    assertThat(problems("typos", conf)).hasSize(3);
  }

  // ---------------------------------------------------------------------------------------------

  static List<String> problems(String where, Configuration conf) {
    List<String> problems = new ArrayList<>();
    for (String key : conf.keySet()) {
      if (ALLOWED.containsKey(key)) continue;
      if (!catalog.isKnown(key)) {
        problems.add(where + ": unknown Flink 2.1 key '" + key + "'");
        continue;
      }
      if (catalog.deprecatedKeys.contains(key)) {
        problems.add(
            where + ": deprecated key '" + key + "' (use " + catalog.options.get(key).key() + ")");
        continue;
      }
      ConfigOption<?> option = catalog.options.get(key);
      if (option != null) {
        try {
          Configuration single = new Configuration();
          single.setString(key, conf.getString(key, null));
          single.get(option);
        } catch (RuntimeException e) {
          problems.add(where + ": bad value for '" + key + "': " + e.getMessage());
        }
      }
    }
    return problems;
  }

  static Set<String> allowedKeys() {
    return ALLOWED.keySet();
  }
}
