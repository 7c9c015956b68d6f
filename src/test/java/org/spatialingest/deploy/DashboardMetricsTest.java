package org.spatialingest.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.it.ChildJvm;
import org.spatialingest.local.LocalFlink;
import org.spatialingest.local.TelemetryGenerator;

/**
 * The Grafana dashboard stays true: a MiniCluster job with Flink's Prometheus reporter ({@code
 * flink-metrics-prometheus} 2.2.0, configured by {@link LocalFlink#withPrometheus}, as {@code demo
 * --prometheus-port} does) is scraped on the PodMonitor's path, and every series each panel of
 * {@code k8s/grafana/spatial-ingest-dashboard.json} selects exists, with the labels the panel
 * groups by, with the job filter the dashboard's {@code $job} variable sets; {@code label_replace}
 * finds the label it extracts. The failed-checkpoint panel's premise holds for that job: Flink's
 * failed count does not grow after the first completed checkpoint. The PodMonitor's port and path
 * match the reporter's configuration in the FlinkDeployment.
 */
class DashboardMetricsTest {
  private static final Path K8S = Path.of("k8s");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int PROMETHEUS_PORT = ChildJvm.freePort();

  @RegisterExtension
  static final MiniClusterExtension FLINK =
      new MiniClusterExtension(
          () ->
              new MiniClusterResourceConfiguration.Builder()
                  .setConfiguration(LocalFlink.withPrometheus(new Configuration(), PROMETHEUS_PORT))
                  .setNumberTaskManagers(1)
                  .setNumberSlotsPerTaskManager(4)
                  .build());

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  private static final Pattern SELECTOR =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)?\\{([^{}]*)}");
  private static final Pattern MATCHER =
      Pattern.compile("\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  // labels a query groups by or matches on: each must be on the series it selects
  private static final Pattern BY = Pattern.compile("\\b(?:by|on)\\s*\\(([^)]*)\\)");
  private static final Pattern LABEL_REPLACE =
      Pattern.compile(
          "label_replace\\((\\{[^{}]*}),\\s*\"([^\"]+)\",\\s*\"\\$(\\d)\",\\s*\"__name__\",\\s*\"([^\"]+)\"\\)");
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+\\S+.*$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  @Test
  void everyPanelQueryFindsItsSeriesWithItsLabels(
      @TempDir Path warehouse, @InjectMiniCluster MiniCluster flink) throws Exception {
    String topic = "dashboard";
    kafka.createTopic(topic, 2);
    TestKit.produce(kafka.bootstrapServers(), topic, new TelemetryGenerator(5, 8, 20, 50), 2_000);
    TestKit.produceValues(
        kafka.bootstrapServers(), topic, List.of("{not json".getBytes(StandardCharsets.UTF_8)));
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            warehouse,
            Map.of("checkpoint.interval", "1s", "sink.max-latency", "2s"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, false);
    String jobName = "spatial-ingest dashboard";
    JobClient job = env.executeAsync(jobName);
    try {
      JsonNode dashboard =
          JSON.readTree(K8S.resolve("grafana/spatial-ingest-dashboard.json").toFile());
      List<Query> queries = queries(dashboard);
      assertThat(queries).hasSizeGreaterThanOrEqualTo(17);
      URI scrape =
          URI.create(
              "http://localhost:" + PROMETHEUS_PORT + podMonitorEndpoint().path("path").asText());
      List<String> missing = List.of("nothing scraped yet");
      long deadline = System.currentTimeMillis() + 180_000;
      while (!missing.isEmpty() && System.currentTimeMillis() < deadline) {
        Thread.sleep(2_000);
        List<Series> series = parse(get(scrape));
        missing = new ArrayList<>();
        for (Query q : queries) {
          // the reporter writes label values with every character but [a-zA-Z0-9:_] as '_'; the
          // dashboard's $job takes its values from those labels
          missing.addAll(q.check(series, jobName.replaceAll("[^a-zA-Z0-9:_]", "_")));
        }
      }
      assertThat(missing).as("panel queries without their series or labels").isEmpty();
      assertFailuresOnlyBeforeTheFirstCompletedCheckpoint(flink.getRestAddress().get(), job);
    } finally {
      // gone before the warehouse folder is deleted (a checkpoint still being written there
      // failed the folder's clean-up once)
      TestKit.cancelAndWait(job);
    }
  }

  /**
   * What the failed-checkpoint panel relies on: on a healthy start every failure Flink counts comes
   * before the first completed checkpoint (triggers refused while tasks are still deploying; see
   * operations.md, "Checkpoints at start"), so counting only failures after it shows 0. Asserted on
   * the REST API's counts: {@code failed} when the first completed checkpoint is seen equals {@code
   * failed} two completed checkpoints later, and no checkpoint that started failed.
   */
  private static void assertFailuresOnlyBeforeTheFirstCompletedCheckpoint(URI rest, JobClient job)
      throws Exception {
    URI checkpoints = rest.resolve("/jobs/" + job.getJobID() + "/checkpoints");
    JsonNode stats = awaitCompleted(checkpoints, 1);
    long failedAtFirstCompleted = stats.path("counts").path("failed").asLong();
    stats = awaitCompleted(checkpoints, stats.path("counts").path("completed").asLong() + 2);
    assertThat(stats.path("counts").path("failed").asLong())
        .as("REST failed count after the first completed checkpoint: %s", stats.path("counts"))
        .isEqualTo(failedAtFirstCompleted);
    for (JsonNode checkpoint : stats.path("history")) {
      assertThat(checkpoint.path("status").asText())
          .as("checkpoint %s", checkpoint.path("id"))
          .isNotEqualTo("FAILED");
    }
  }

  private static JsonNode awaitCompleted(URI checkpoints, long completed) throws Exception {
    JsonNode stats = JSON.readTree(get(checkpoints));
    long deadline = System.currentTimeMillis() + 120_000;
    while (stats.path("counts").path("completed").asLong() < completed
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
      stats = JSON.readTree(get(checkpoints));
    }
    assertThat(stats.path("counts").path("completed").asLong())
        .as("%s", stats.path("counts"))
        .isGreaterThanOrEqualTo(completed);
    return stats;
  }

  @Test
  void thePodMonitorScrapesThePortAndPathTheReporterServes() throws Exception {
    JsonNode endpoint = podMonitorEndpoint();
    assertThat(endpoint.path("path").asText())
        .as("the path Flink's Prometheus reporter serves (scraped by the test above)")
        .isEqualTo("/metrics");
    JsonNode deployment = KustomizeLite.readSingle(K8S.resolve("base/flinkdeployment.yaml"));
    JsonNode flinkConf = deployment.path("spec").path("flinkConfiguration");
    assertThat(flinkConf.path("metrics.reporter.prom.factory.class").asText())
        .isEqualTo(LocalFlink.PROMETHEUS_FACTORY);
    Integer containerPort = null;
    for (JsonNode container : deployment.at("/spec/podTemplate/spec/containers")) {
      if (container.path("name").asText().equals("flink-main-container")) {
        for (JsonNode port : container.path("ports")) {
          if (port.path("name").asText().equals(endpoint.path("port").asText())) {
            containerPort = port.path("containerPort").asInt();
          }
        }
      }
    }
    assertThat(containerPort)
        .as("the container port named %s", endpoint.path("port").asText())
        .isNotNull();
    assertThat(flinkConf.path("metrics.reporter.prom.port").asText())
        .as("the reporter listens on the port the PodMonitor scrapes")
        .isEqualTo(Integer.toString(containerPort));
    for (List<com.fasterxml.jackson.databind.node.ObjectNode> objects :
        ManifestSchemaTest.renderAll().values()) {
      for (JsonNode o : objects) {
        JsonNode port = o.at("/spec/flinkConfiguration/metrics.reporter.prom.port");
        if (!port.isMissingNode()) {
          assertThat(port.asText())
              .as("an overlay's reporter port")
              .isEqualTo(containerPort.toString());
        }
      }
    }
  }

  private static JsonNode podMonitorEndpoint() {
    JsonNode monitor = KustomizeLite.readSingle(K8S.resolve("base/podmonitor.yaml"));
    JsonNode endpoints = monitor.path("spec").path("podMetricsEndpoints");
    assertThat(endpoints).hasSize(1);
    return endpoints.get(0);
  }

  /** One panel target: its selectors, the labels it groups by, its label_replace extractions. */
  private record Query(String panel, String expr) {
    List<String> check(List<Series> all, String job) {
      List<String> problems = new ArrayList<>();
      List<String> by = new ArrayList<>();
      Matcher b = BY.matcher(expr);
      while (b.find()) {
        for (String label : b.group(1).split(",")) {
          if (!label.isBlank()) {
            by.add(label.trim());
          }
        }
      }
      Map<String, List<Series>> selected = new LinkedHashMap<>();
      Matcher s = SELECTOR.matcher(expr.replace("$job", job));
      while (s.find()) {
        List<Series> hits = new ArrayList<>();
        for (Series series : all) {
          if (series.matches(s.group(1), s.group(2))) {
            hits.add(series);
          }
        }
        selected.put(s.group(), hits);
        if (hits.isEmpty()) {
          problems.add(panel + ": no series for " + s.group());
          continue;
        }
        for (String label : by) {
          if (label.equals(extractedLabel())) {
            continue;
          }
          if (hits.stream().noneMatch(h -> !h.label(label).isEmpty())) {
            problems.add(panel + ": no series of " + s.group() + " has label " + label);
          }
        }
      }
      Matcher r = LABEL_REPLACE.matcher(expr);
      if (r.find()) {
        Pattern name = Pattern.compile(r.group(4));
        int group = Integer.parseInt(r.group(3));
        boolean extracted = false;
        for (List<Series> hits : selected.values()) {
          for (Series h : hits) {
            Matcher m = name.matcher(h.name());
            extracted |= m.matches() && m.group(group) != null && !m.group(group).isEmpty();
          }
        }
        if (!extracted) {
          problems.add(panel + ": label_replace extracts no " + r.group(2));
        }
      }
      return problems;
    }

    String extractedLabel() {
      Matcher r = LABEL_REPLACE.matcher(expr);
      return r.find() ? r.group(2) : "";
    }
  }

  /** One scraped sample's series. */
  private record Series(String name, Map<String, String> labels) {
    String label(String key) {
      return key.equals("__name__") ? name : labels.getOrDefault(key, "");
    }

    /** Prometheus selector semantics: regexes are anchored, a missing label is "". */
    boolean matches(String metric, String matchers) {
      if (metric != null && !metric.equals(name)) {
        return false;
      }
      Matcher m = MATCHER.matcher(matchers);
      while (m.find()) {
        String value = label(m.group(1));
        String wanted = m.group(3).replace("\\\\", "\\");
        boolean ok =
            switch (m.group(2)) {
              case "=" -> value.equals(wanted);
              case "!=" -> !value.equals(wanted);
              case "=~" -> Pattern.matches(wanted, value);
              default -> !Pattern.matches(wanted, value);
            };
        if (!ok) {
          return false;
        }
      }
      return true;
    }
  }

  /** Every panel target's expression, and the dashboard variables' queries. */
  private static List<Query> queries(JsonNode dashboard) {
    List<Query> out = new ArrayList<>();
    collect(dashboard.path("panels"), out);
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      JsonNode query = variable.path("query");
      String text = query.isObject() ? query.path("query").asText() : query.asText();
      Matcher m =
          Pattern.compile("label_values\\(([a-zA-Z_:][a-zA-Z0-9_:]*),\\s*(\\w+)\\)").matcher(text);
      if (m.find()) {
        out.add(
            new Query(
                "variable " + variable.path("name").asText(),
                "by (" + m.group(2) + ") (" + m.group(1) + "{})"));
      }
    }
    return out;
  }

  private static void collect(JsonNode panels, List<Query> out) {
    for (JsonNode panel : panels) {
      collect(panel.path("panels"), out);
      for (JsonNode target : panel.path("targets")) {
        out.add(new Query(panel.path("title").asText(), target.path("expr").asText()));
      }
    }
  }

  private static List<Series> parse(String scrape) {
    List<Series> out = new ArrayList<>();
    for (String line : scrape.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (line.startsWith("#") || !m.matches()) {
        continue;
      }
      Map<String, String> labels = new HashMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      out.add(new Series(m.group(1), labels));
    }
    return out;
  }

  private static String get(URI uri) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }
}
