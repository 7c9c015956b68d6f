package org.spatialingest.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Validates the Kubernetes manifests under {@code k8s/}.
 *
 * <p><b>Rendering.</b> kubectl/kustomize are not available here, so each overlay is rendered
 * in-test by {@link KustomizeLite} (base resources + the overlay's patches, merge-patch semantics,
 * JSON 6902 ops, namespace), and the <em>rendered</em> objects are validated. KustomizeLite fails
 * on any kustomization feature it does not implement.
 *
 * <p><b>Schema source.</b> The FlinkDeployment / FlinkSessionJob {@code openAPIV3Schema} is read
 * from the CRD YAML that the fabric8 CRD generator put into {@code
 * org.apache.flink:flink-kubernetes-operator-api} jars ({@code META-INF/fabric8/*-v1.yml}),
 * resolved from Maven Central as a test dependency. The newest release served there is
 * <b>1.10.0</b> (1.11.0-1.14.0 return 404), and its CRD's {@code spec.flinkVersion} enum stops at
 * {@code v1_20}. The operator line that runs Flink 2.1 is 1.13+, whose CRD (read in the upstream
 * repository at tag release-1.13.0, not copied) differs from 1.10.0 in the parts this repository
 * uses only by: (a) {@code flinkVersion} also allowing v2_0, v2_1, v2_2 - this test adds v2_0 and
 * v2_1 to the enum; (b) {@code flinkConfiguration} being free-form YAML instead of a string map -
 * we keep quoted strings, which satisfy both; (c) new optional fields ({@code
 * job.autoscalerResetNonce}, newer Pod API fields) that we do not use. So the check is strict for
 * 1.13 too, except that it would reject those newer fields.
 *
 * <p><b>Unknown fields.</b> Kubernetes prunes (or, with {@code kubectl --validate=strict}, rejects)
 * fields a structural schema does not declare. Here every object schema gets {@code
 * additionalProperties: false}, except where the CRD says {@code
 * x-kubernetes-preserve-unknown-fields: true} or already declares {@code additionalProperties}
 * (maps). The top-level {@code metadata} (ObjectMeta, validated by the API server, not the CRD) is
 * only required to have a name.
 *
 * <p><b>Core kinds</b> (ServiceAccount, Role, RoleBinding, ConfigMap, PodMonitor) are checked
 * structurally (apiVersion/kind/metadata.name, a known kind, and a few field-level and cross-object
 * checks), not against the Kubernetes OpenAPI.
 */
class ManifestSchemaTest {

  static final Path K8S = Path.of("k8s");
  static final List<String> OVERLAYS = List.of("dev", "prod", "session");
  private static final String CRD_DIR = "META-INF/fabric8/";

  private static final Map<String, String> KNOWN_KINDS =
      Map.of(
          "FlinkDeployment", "flink.apache.org/v1beta1",
          "FlinkSessionJob", "flink.apache.org/v1beta1",
          "ServiceAccount", "v1",
          "ConfigMap", "v1",
          "Role", "rbac.authorization.k8s.io/v1",
          "RoleBinding", "rbac.authorization.k8s.io/v1",
          "PodMonitor", "monitoring.coreos.com/v1");

  static Schema deploymentSchema;
  static Schema sessionJobSchema;

  @BeforeAll
  static void loadSchemas() {
    deploymentSchema = strictSchema("flinkdeployments.flink.apache.org-v1.yml", true);
    sessionJobSchema = strictSchema("flinksessionjobs.flink.apache.org-v1.yml", false);
  }

  static Map<String, List<ObjectNode>> renderAll() {
    Map<String, List<ObjectNode>> out = new LinkedHashMap<>();
    for (String o : OVERLAYS) {
      out.put(o, KustomizeLite.build(K8S.resolve("overlays").resolve(o)));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"dev", "prod", "session"})
  void renderedOverlayIsValid(String overlay) {
    List<ObjectNode> objects = KustomizeLite.build(K8S.resolve("overlays").resolve(overlay));
    assertThat(objects).isNotEmpty();
    List<String> problems = new ArrayList<>();
    for (ObjectNode o : objects) {
      problems.addAll(validate(o));
    }
    assertThat(problems).as("problems in overlay %s", overlay).isEmpty();

    Set<String> kinds =
        objects.stream().map(o -> o.path("kind").asText()).collect(Collectors.toSet());
    assertThat(kinds)
        .contains(
            "FlinkDeployment", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "PodMonitor");
    assertThat(objects)
        .allSatisfy(o -> assertThat(o.path("metadata").path("namespace").asText()).isNotBlank());
    crossChecks(overlay, objects);
  }

  @Test
  void applicationModeDeploymentHasTheRequiredShape() {
    for (String overlay : List.of("dev", "prod")) {
      ObjectNode d =
          one(KustomizeLite.build(K8S.resolve("overlays").resolve(overlay)), "FlinkDeployment");
      JsonNode spec = d.path("spec");
      assertThat(spec.path("flinkVersion").asText()).isEqualTo("v2_1");
      assertThat(spec.path("mode").asText()).isEqualTo("native");
      JsonNode job = spec.path("job");
      assertThat(job.path("jarURI").asText())
          .isEqualTo("local:///opt/flink/usrlib/spatial-ingest.jar");
      assertThat(job.path("entryClass").asText()).isEqualTo("org.spatialingest.cli.Main");
      assertThat(job.path("args").get(0).asText()).isEqualTo("run");
      assertThat(job.path("args").get(1).asText()).isEqualTo("--config");
      assertThat(job.path("upgradeMode").asText()).isEqualTo("last-state");
      JsonNode conf = spec.path("flinkConfiguration");
      assertThat(conf.path("high-availability.type").asText()).isEqualTo("kubernetes");
      assertThat(conf.path("jobmanager.scheduler").asText()).isEqualTo("adaptive");
      assertThat(conf.path("job.autoscaler.enabled").asText()).isEqualTo("true");
      assertThat(conf.path("execution.checkpointing.dir").asText()).startsWith("s3://");
      assertThat(conf.path("execution.checkpointing.savepoint-dir").asText()).startsWith("s3://");
      assertThat(conf.path("high-availability.storageDir").asText()).startsWith("s3://");
      assertThat(conf.path("metrics.reporter.prom.factory.class").asText())
          .isEqualTo("org.apache.flink.metrics.prometheus.PrometheusReporterFactory");
      int maxParallelism = Integer.parseInt(conf.path("pipeline.max-parallelism").asText());
      int vertexMax = Integer.parseInt(conf.path("job.autoscaler.vertex.max-parallelism").asText());
      assertThat(vertexMax).isLessThanOrEqualTo(maxParallelism);
      // highly divisible: every parallelism 1..10 gets equal key-group counts
      for (int p = 1; p <= 10; p++) {
        if (p != 7) assertThat(maxParallelism % p).as("max-parallelism %% %d", p).isZero();
      }
    }
    JsonNode prodConf =
        one(KustomizeLite.build(K8S.resolve("overlays/prod")), "FlinkDeployment")
            .path("spec")
            .path("flinkConfiguration");
    assertThat(prodConf.path("web.submit.enable").asText()).isEqualTo("false");
  }

  @Test
  void sessionOverlayIsASessionClusterPlusSessionJob() {
    List<ObjectNode> objects = KustomizeLite.build(K8S.resolve("overlays/session"));
    ObjectNode d = one(objects, "FlinkDeployment");
    assertThat(d.path("spec").has("job")).as("session cluster has no job").isFalse();
    assertThat(d.path("spec").path("flinkConfiguration").path("web.submit.enable").asText())
        .isEqualTo("true");
    ObjectNode j = one(objects, "FlinkSessionJob");
    assertThat(j.path("spec").path("deploymentName").asText())
        .isEqualTo(d.path("metadata").path("name").asText());
    assertThat(j.path("spec").path("job").path("entryClass").asText())
        .isEqualTo("org.spatialingest.cli.Main");
  }

  @Test
  void unknownFieldsAreRejected() {
    ObjectNode d = one(KustomizeLite.build(K8S.resolve("overlays/prod")), "FlinkDeployment");
    assertThat(validate(d)).isEmpty();

    ObjectNode typoInJob = d.deepCopy();
    ((ObjectNode) typoInJob.path("spec").path("job")).put("upgradeMod", "last-state");
    assertThat(validate(typoInJob)).anySatisfy(p -> assertThat(p).contains("upgradeMod"));

    ObjectNode typoInSpec = d.deepCopy();
    ((ObjectNode) typoInSpec.path("spec")).put("flinkConfig", "x");
    assertThat(validate(typoInSpec)).anySatisfy(p -> assertThat(p).contains("flinkConfig"));

    ObjectNode typoInPodTemplate = d.deepCopy();
    ObjectNode container =
        (ObjectNode)
            typoInPodTemplate
                .path("spec")
                .path("podTemplate")
                .path("spec")
                .path("containers")
                .get(0);
    container.set("volumeMount", container.get("volumeMounts"));
    assertThat(validate(typoInPodTemplate)).anySatisfy(p -> assertThat(p).contains("volumeMount"));

    ObjectNode oldVersion = d.deepCopy();
    ((ObjectNode) oldVersion.path("spec")).put("flinkVersion", "v2_9");
    assertThat(validate(oldVersion)).isNotEmpty();

    ObjectNode wrongType = d.deepCopy();
    ((ObjectNode) wrongType.path("spec").path("job")).put("parallelism", "two");
    assertThat(validate(wrongType)).isNotEmpty();

    ObjectNode session =
        one(KustomizeLite.build(K8S.resolve("overlays/session")), "FlinkSessionJob");
    ((ObjectNode) session.path("spec")).put("deploymentname", "x");
    assertThat(validate(session)).anySatisfy(p -> assertThat(p).contains("deploymentname"));
  }

  @Test
  void unknownKindsAndMissingNamesAreRejected() {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.put("apiVersion", "v1").put("kind", "Secret").putObject("metadata").put("name", "x");
    assertThat(validate(o)).anySatisfy(p -> assertThat(p).contains("unknown kind"));
    ObjectNode noName = JsonNodeFactory.instance.objectNode();
    noName.put("apiVersion", "v1").put("kind", "ConfigMap").putObject("metadata");
    assertThat(validate(noName)).anySatisfy(p -> assertThat(p).contains("metadata.name"));
  }

  @Test
  void secretTemplatesCarryNoValuesAndNoSecretIsRendered() throws IOException {
    List<Path> examples;
    try (Stream<Path> s = Files.list(K8S.resolve("secrets"))) {
      examples = s.filter(p -> p.toString().endsWith(".yaml.example")).sorted().toList();
    }
    assertThat(examples).hasSize(2);
    for (Path p : examples) {
      JsonNode secret = KustomizeLite.readSingle(p);
      assertThat(secret.path("kind").asText()).isEqualTo("Secret");
      assertThat(secret.has("data")).isFalse();
      secret
          .path("stringData")
          .fields()
          .forEachRemaining(
              e -> assertThat(e.getValue().asText()).as("%s %s", p, e.getKey()).isEmpty());
    }
    for (List<ObjectNode> objects : renderAll().values()) {
      assertThat(objects).noneMatch(o -> "Secret".equals(o.path("kind").asText()));
    }
    // nothing that looks like a credential in any manifest or job config
    Pattern literalSecret =
        Pattern.compile(
            "(?i)(password|secret-key|secret_access_key)\\s*[=:]\\s*\"?[A-Za-z0-9/+]{6,}");
    try (Stream<Path> s = Files.walk(K8S)) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
        String text = Files.readString(p);
        assertThat(literalSecret.matcher(text).find()).as("literal credential in %s", p).isFalse();
      }
    }
  }

  @Test
  void grafanaDashboardQueriesTheAgreedMetrics() throws IOException {
    JsonNode dash =
        KustomizeLite.YAML.readTree(K8S.resolve("grafana/spatial-ingest-dashboard.json").toFile());
    String exprs =
        dash.findValues("expr").stream().map(JsonNode::asText).collect(Collectors.joining("\n"));
    assertThat(exprs)
        .contains(
            "flink_taskmanager_job_task_operator_pendingRecords",
            "numRecordsInPerSecond",
            "numRecordsOutPerSecond",
            "flink_taskmanager_job_task_busyTimeMsPerSecond",
            "flink_taskmanager_job_task_backPressuredTimeMsPerSecond",
            "flink_taskmanager_job_task_operator_spatialSink_bufferedBytes",
            "flink_taskmanager_job_task_operator_spatialSink_oldestBufferedAgeMs",
            "flink_taskmanager_job_task_operator_spatialSink_filesClosed_(bytes|latency|memory|end_of_input)",
            "spatialSink_commitDurationMs",
            "spatialSink_rowAgeAtCommitMs",
            "rejects_",
            "flink_jobmanager_job_lastCheckpointDuration",
            "flink_jobmanager_job_lastCheckpointSize");
    assertThat(dash.path("panels")).hasSizeGreaterThanOrEqualTo(12);
  }

  // ---------------------------------------------------------------------------------------------

  /** All problems of one object; empty when valid. */
  static List<String> validate(JsonNode o) {
    List<String> problems = new ArrayList<>();
    String kind = o.path("kind").asText();
    String name = o.path("metadata").path("name").asText();
    String where = kind + "/" + name;
    if (!KNOWN_KINDS.containsKey(kind)) {
      problems.add(where + ": unknown kind '" + kind + "'");
      return problems;
    }
    if (!KNOWN_KINDS.get(kind).equals(o.path("apiVersion").asText())) {
      problems.add(
          where
              + ": apiVersion "
              + o.path("apiVersion").asText()
              + ", expected "
              + KNOWN_KINDS.get(kind));
    }
    if (name.isBlank()) {
      problems.add(where + ": metadata.name missing");
    }
    switch (kind) {
      case "FlinkDeployment" -> schemaErrors(deploymentSchema, o, where, problems);
      case "FlinkSessionJob" -> schemaErrors(sessionJobSchema, o, where, problems);
      case "ServiceAccount" ->
          onlyFields(
              o,
              where,
              problems,
              "metadata",
              "automountServiceAccountToken",
              "imagePullSecrets",
              "secrets");
      case "ConfigMap" -> {
        onlyFields(o, where, problems, "metadata", "data", "binaryData", "immutable");
        o.path("data")
            .fields()
            .forEachRemaining(
                e -> {
                  if (!e.getValue().isTextual())
                    problems.add(where + ": data." + e.getKey() + " is not a string");
                });
      }
      case "Role" -> {
        onlyFields(o, where, problems, "metadata", "rules");
        for (JsonNode r : o.path("rules")) {
          for (String f : List.of("apiGroups", "resources", "verbs")) {
            if (!r.path(f).isArray() || r.path(f).isEmpty())
              problems.add(where + ": rule without " + f);
          }
          for (JsonNode v : r.path("verbs")) {
            if ("*".equals(v.asText())) problems.add(where + ": wildcard verb");
          }
        }
      }
      case "RoleBinding" -> {
        onlyFields(o, where, problems, "metadata", "roleRef", "subjects");
        if (!o.path("roleRef").path("name").isTextual())
          problems.add(where + ": roleRef.name missing");
      }
      case "PodMonitor" -> {
        onlyFields(o, where, problems, "metadata", "spec");
        if (!o.path("spec").path("selector").isObject())
          problems.add(where + ": spec.selector missing");
        if (!o.path("spec").path("podMetricsEndpoints").isArray())
          problems.add(where + ": spec.podMetricsEndpoints missing");
      }
      default -> throw new IllegalStateException(kind);
    }
    return problems;
  }

  private static void onlyFields(
      JsonNode o, String where, List<String> problems, String... allowed) {
    Set<String> ok = new TreeSet<>(List.of(allowed));
    ok.add("apiVersion");
    ok.add("kind");
    o.fieldNames()
        .forEachRemaining(
            f -> {
              if (!ok.contains(f)) problems.add(where + ": unknown field " + f);
            });
  }

  private static void schemaErrors(Schema schema, JsonNode o, String where, List<String> problems) {
    for (Error e : schema.validate(o)) {
      problems.add(where + ": " + e);
    }
  }

  private void crossChecks(String overlay, List<ObjectNode> objects) {
    ObjectNode d = one(objects, "FlinkDeployment");
    JsonNode pod = d.path("spec").path("podTemplate").path("spec");
    // service account <- role binding -> role
    String sa = d.path("spec").path("serviceAccount").asText();
    assertThat(named(objects, "ServiceAccount", sa)).as("ServiceAccount %s", sa).isTrue();
    ObjectNode rb = one(objects, "RoleBinding");
    assertThat(named(objects, "Role", rb.path("roleRef").path("name").asText())).isTrue();
    assertThat(rb.path("subjects").findValuesAsText("name")).contains(sa);
    // config map mounted, args point into the mount
    JsonNode container = pod.path("containers").get(0);
    assertThat(container.path("name").asText()).isEqualTo("flink-main-container");
    String cmName =
        pod.path("volumes").findValuesAsText("name").contains("job-config")
            ? volume(pod, "job-config").path("configMap").path("name").asText()
            : "";
    ObjectNode cm =
        objects.stream()
            .filter(
                o ->
                    "ConfigMap".equals(o.path("kind").asText())
                        && cmName.equals(o.path("metadata").path("name").asText()))
            .findFirst()
            .orElseThrow();
    String mountPath = mountPath(container, "job-config");
    ObjectNode session =
        objects.stream()
            .filter(o -> "FlinkSessionJob".equals(o.path("kind").asText()))
            .findFirst()
            .orElse(null);
    JsonNode args = (session != null ? session : d).path("spec").path("job").path("args");
    assertThat(args.get(2).asText()).isEqualTo(mountPath + "/job.yaml");
    checkJobConfig(overlay, cm.path("data").path("job.yaml").asText());
    // PodMonitor scrapes a port the pods expose, with the labels Flink puts on its pods
    ObjectNode pm = one(objects, "PodMonitor");
    assertThat(container.path("ports").findValuesAsText("name"))
        .contains(pm.path("spec").path("podMetricsEndpoints").get(0).path("port").asText());
    assertThat(pm.path("spec").path("selector").path("matchLabels").path("app").asText())
        .isEqualTo(d.path("metadata").path("name").asText());
    String promPort =
        d.path("spec").path("flinkConfiguration").path("metrics.reporter.prom.port").asText();
    assertThat(container.path("ports").findValuesAsText("containerPort")).contains(promPort);
    // secrets only by reference, and only to the two documented Secrets/keys
    Set<String> secretRefs = new TreeSet<>();
    for (JsonNode ref : container.findValues("secretKeyRef")) {
      secretRefs.add(ref.path("name").asText() + "/" + ref.path("key").asText());
    }
    for (JsonNode v : pod.path("volumes")) {
      if (v.has("secret")) {
        for (JsonNode item : v.path("secret").path("items")) {
          secretRefs.add(
              v.path("secret").path("secretName").asText() + "/" + item.path("key").asText());
        }
      }
    }
    assertThat(secretRefs)
        .containsExactlyInAnyOrder(
            "spatial-ingest-kafka/KAFKA_SASL_USERNAME",
            "spatial-ingest-kafka/KAFKA_SASL_PASSWORD",
            "spatial-ingest-kafka/ca.crt",
            "spatial-ingest-s3/AWS_ACCESS_KEY_ID",
            "spatial-ingest-s3/AWS_SECRET_ACCESS_KEY");
    assertThat(container.findValues("value").stream().map(JsonNode::asText))
        .noneMatch(v -> v.toLowerCase().contains("password"));
  }

  private static void checkJobConfig(String overlay, String yaml) {
    JsonNode root = KustomizeLite.parse(yaml);
    Map<String, String> flat = new LinkedHashMap<>();
    flatten("", root, flat);
    // the job's own validation: unknown keys and bad values fail exactly as they would at start
    org.assertj.core.api.Assertions.assertThatCode(
            () -> org.spatialingest.config.JobConfig.fromMap(flat))
        .as("%s: job.yaml is a valid job configuration", overlay)
        .doesNotThrowAnyException();
    assertThat(flat.keySet())
        .containsAll(
            List.of(
                "kafka.bootstrap-servers",
                "kafka.topic",
                "kafka.group-id",
                "catalog.type",
                "catalog.warehouse",
                "table.namespace",
                "table.name"));
    String jaas = flat.get("kafka.properties.sasl.jaas.config");
    assertThat(jaas)
        .as("JAAS config only references env vars")
        .contains("${env:KAFKA_SASL_PASSWORD}");
    assertThat(jaas.replaceAll("\\$\\{env:[A-Z_]+}", ""))
        .doesNotContainPattern("password=\"[^\"]+\"");
  }

  private static void flatten(String prefix, JsonNode n, Map<String, String> out) {
    if (n.isObject()) {
      n.fields()
          .forEachRemaining(
              e ->
                  flatten(
                      prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey(),
                      e.getValue(),
                      out));
    } else {
      out.put(prefix, n.asText());
    }
  }

  static ObjectNode one(List<ObjectNode> objects, String kind) {
    List<ObjectNode> found =
        objects.stream().filter(o -> kind.equals(o.path("kind").asText())).toList();
    assertThat(found).as("exactly one %s", kind).hasSize(1);
    return found.get(0);
  }

  private static boolean named(List<ObjectNode> objects, String kind, String name) {
    return objects.stream()
        .anyMatch(
            o ->
                kind.equals(o.path("kind").asText())
                    && name.equals(o.path("metadata").path("name").asText()));
  }

  private static JsonNode volume(JsonNode podSpec, String name) {
    for (JsonNode v : podSpec.path("volumes")) if (name.equals(v.path("name").asText())) return v;
    throw new AssertionError("no volume " + name);
  }

  private static String mountPath(JsonNode container, String name) {
    for (JsonNode m : container.path("volumeMounts"))
      if (name.equals(m.path("name").asText())) return m.path("mountPath").asText();
    throw new AssertionError("no volumeMount " + name);
  }

  // --- CRD schema
  // ---------------------------------------------------------------------------------

  static Schema strictSchema(String crdFile, boolean addFlink2Versions) {
    JsonNode crd;
    try (InputStream in =
        ManifestSchemaTest.class.getClassLoader().getResourceAsStream(CRD_DIR + crdFile)) {
      assertThat(in)
          .as("CRD %s on the test classpath (flink-kubernetes-operator-api)", crdFile)
          .isNotNull();
      crd = KustomizeLite.YAML.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    JsonNode version = null;
    for (JsonNode v : crd.path("spec").path("versions")) {
      if ("v1beta1".equals(v.path("name").asText())) version = v;
    }
    assertThat(version).as("v1beta1 in %s", crdFile).isNotNull();
    ObjectNode schema = ((ObjectNode) version.path("schema").path("openAPIV3Schema")).deepCopy();
    forbidUnknownFields(schema);
    ObjectNode props = (ObjectNode) schema.get("properties");
    // the generated root schema declares only spec/status; apiVersion and kind are checked against
    // KNOWN_KINDS
    props.putObject("apiVersion").put("type", "string");
    props.putObject("kind").put("type", "string");
    // ObjectMeta is validated by the API server, not the CRD schema: require a name, allow the rest
    ObjectNode meta = props.putObject("metadata");
    meta.put("type", "object");
    meta.putArray("required").add("name");
    // the status subresource is written by the operator, never by us
    props.remove("status");
    schema.putArray("required").add("apiVersion").add("kind").add("metadata").add("spec");
    if (addFlink2Versions) {
      ArrayNode e =
          (ArrayNode)
              schema
                  .path("properties")
                  .path("spec")
                  .path("properties")
                  .path("flinkVersion")
                  .path("enum");
      assertThat(e).as("flinkVersion enum").isNotEmpty();
      Set<String> have = new TreeSet<>();
      e.forEach(x -> have.add(x.asText()));
      for (String v : List.of("v2_0", "v2_1")) if (!have.contains(v)) e.add(v);
    }
    return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4).getSchema(schema);
  }

  /**
   * additionalProperties:false on every object schema that neither preserves unknown fields nor is
   * a map.
   */
  static void forbidUnknownFields(JsonNode node) {
    if (node.isArray()) {
      node.forEach(ManifestSchemaTest::forbidUnknownFields);
      return;
    }
    if (!node.isObject()) return;
    ObjectNode o = (ObjectNode) node;
    boolean preserve = o.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
    boolean isObject = "object".equals(o.path("type").asText()) || o.has("properties");
    if (isObject && !preserve && !o.has("additionalProperties")) {
      o.put("additionalProperties", false);
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getKey().equals("properties")) {
        e.getValue().forEach(ManifestSchemaTest::forbidUnknownFields);
      } else if (e.getValue().isContainerNode()) {
        forbidUnknownFields(e.getValue());
      }
    }
  }
}
