package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.LogCapture;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.it.ChildJvm;
import org.spatialingest.local.TelemetryGenerator;

/**
 * Marked secrets go into every configuration key that carries a credential, and through every path
 * that shows configuration or messages: {@code run --print-config}, a whole {@code run} (its
 * output, its run summary, every log line at INFO and above), {@code inspect} and {@code plan}
 * output, configuration errors that quote a bad line, a library's failure that quotes a catalog
 * URI, and the Flink REST API of the MiniCluster job (name, plan, global job parameters, job and
 * cluster configuration, exceptions). None of the marks may show anywhere.
 *
 * <p>A local {@code run} in its own JVM (as {@code java -jar} starts it) with secrets on its
 * command line and a library line quoting one: neither its output nor any log file it writes under
 * its {@code java.io.tmpdir} holds them.
 */
class SecretsOnScreenTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Each a credential's value; the test fails if any shows anywhere. */
  private static final List<String> MARKS =
      List.of(
          "MARK-jaas-pw-1",
          "MARK-truststore-2",
          "MARK-key-pw-3",
          "MARK-s3-secret-4",
          "MARK-credential-5",
          "MARK-token-6",
          "MARK-s3-access-7",
          "MARK-uri-pw-8",
          "MARK-yaml-9",
          "MARK-set-10",
          "MARK-jdbc-11");

  /** Secrets given on a local run's command line; the test fails if any shows anywhere. */
  private static final List<String> COMMAND_LINE_MARKS =
      List.of("MARK-cmdline-12", "MARK-cmdline-13", "MARK-cmdline-14");

  @Test
  void aLocalRunsLogFilesHoldNoSecret(@TempDir Path dir) throws Exception {
    Path records = records(dir);
    Path javaTmp = Files.createDirectories(dir.resolve("java-tmp"));
    String output;
    int exit;
    try (ChildJvm run =
        ChildJvm.start(
            "local run with secrets on its command line",
            LocalLogFileTest.classpath(),
            List.of(
                "-Xmx512m",
                "-Djava.io.tmpdir=" + javaTmp,
                // a library that quotes a value it was given, after the configuration was read
                "-D" + LateShutdownLogging.EXTRA_PROPERTY + "=: quoted MARK-cmdline-12"),
            LateShutdownLogging.class.getName(),
            List.of(
                "run",
                "--set",
                "source=file:" + records,
                "--set",
                "catalog.warehouse=" + dir.resolve("warehouse"),
                "--set",
                "checkpoint.interval=200ms",
                "--set",
                "kafka.properties.ssl.truststore.password=MARK-cmdline-12",
                "--set",
                "catalog.properties.s3.secret-access-key=MARK-cmdline-13",
                "--set=kafka.properties.ssl.key.password=MARK-cmdline-14"),
            Map.of(),
            dir.resolve("child-output.txt"))) {
      exit = run.waitFor(Duration.ofSeconds(120));
      output = run.output();
    }
    assertThat(exit).as(output).isZero();
    List<Path> logs;
    try (Stream<Path> files = Files.walk(javaTmp)) {
      logs = files.filter(f -> f.getFileName().toString().endsWith(".log")).toList();
    }
    assertThat(logs).as("the run's log file").isNotEmpty();
    StringBuilder logged = new StringBuilder();
    for (Path log : logs) {
      logged.append(new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
    }
    assertThat(logged.toString())
        .contains("spatial-ingest run started: run --set source=file:")
        .contains("--set kafka.properties.ssl.truststore.password=******")
        .contains("--set catalog.properties.s3.secret-access-key=******")
        .contains("--set=kafka.properties.ssl.key.password=******")
        .contains(LateShutdownLogging.LATE_LINE + ": quoted ******");
    for (String mark : COMMAND_LINE_MARKS) {
      assertThat(output).as("no %s in the output", mark).doesNotContain(mark);
      assertThat(logged.toString()).as("no %s in a log file", mark).doesNotContain(mark);
    }
  }

  /** 200 valid records and one malformed. */
  private static Path records(Path dir) throws Exception {
    Path records = dir.resolve("records.jsonl");
    TelemetryGenerator generator = new TelemetryGenerator(3, 5, 10, 20);
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 200; i++) {
      lines.append(
          new String(generator.next(1_700_000_000_000L + i).json(), StandardCharsets.UTF_8));
      lines.append('\n');
    }
    lines.append("{not json\n");
    Files.writeString(records, lines);
    return records;
  }

  @Test
  void noMarkedSecretShowsOnAnyPath(@TempDir Path dir, @InjectMiniCluster MiniCluster flink)
      throws Exception {
    Path records = records(dir);
    Path config = dir.resolve("job.yaml");
    Files.writeString(
        config,
        "source: file:"
            + records
            + "\n"
            + "kafka:\n"
            + "  properties:\n"
            + "    security.protocol: SASL_SSL\n"
            + "    sasl.mechanism: SCRAM-SHA-512\n"
            + "    sasl.jaas.config: org.apache.kafka.common.security.scram.ScramLoginModule required"
            + " username=\"ingest\" password=\"MARK-jaas-pw-1\";\n"
            + "    ssl.truststore.password: MARK-truststore-2\n"
            + "    ssl.key.password: MARK-key-pw-3\n"
            + "catalog:\n"
            + "  type: hadoop\n"
            + "  warehouse: "
            + dir.resolve("warehouse")
            + "\n"
            + "  uri: http://ingest:MARK-uri-pw-8@rest.example:8181\n"
            + "  properties:\n"
            + "    s3.secret-access-key: MARK-s3-secret-4\n"
            + "    s3.access-key-id: MARK-s3-access-7\n"
            + "    credential: client:MARK-credential-5\n"
            + "    token: MARK-token-6\n"
            + "table:\n"
            + "  name: secrets\n");
    List<String> seen = new ArrayList<>();
    StringWriter logs = new StringWriter();
    try (LogCapture capture = LogCapture.start(logs)) {
      CliRun printed = CliRun.of("run", "--config", config.toString(), "--print-config");
      assertThat(printed.exitCode()).isZero();
      assertThat(printed.out())
          .contains("kafka.properties.sasl.jaas.config: ******")
          .contains("catalog.properties.s3.secret-access-key: ******")
          .contains("catalog.uri: http://ingest:******@rest.example:8181")
          .contains("kafka.properties.sasl.mechanism: SCRAM-SHA-512");
      seen.add(printed.out() + printed.err());
      assertThat(ConfigLoader.load(config, List.of()).toString()).contains("******");
      seen.add(ConfigLoader.load(config, List.of()).toString());

      CliRun run = CliRun.of("run", "--config", config.toString());
      assertThat(run.exitCode()).as(run.err()).isZero();
      assertThat(run.out()).as("the run summary").contains("rows");
      seen.add(run.out() + run.err());

      CliRun inspect = CliRun.of("inspect", "--config", config.toString());
      assertThat(inspect.exitCode()).as(inspect.err()).isZero();
      seen.add(inspect.out() + inspect.err());
      CliRun inspectJson = CliRun.of("inspect", "--config", config.toString(), "--json");
      seen.add(inspectJson.out() + inspectJson.err());
      CliRun plan =
          CliRun.of(
              "plan",
              "--sample",
              records.toString(),
              "--config",
              config.toString(),
              "--rate",
              "10");
      assertThat(plan.exitCode()).as(plan.err()).isZero();
      seen.add(plan.out() + plan.err());

      // validation messages that quote what they refuse
      Path broken = dir.resolve("broken.yaml");
      Files.writeString(broken, "kafka:\n  properties:\n    sasl.jaas.config: \"MARK-yaml-9\n");
      CliRun badYaml = CliRun.of("run", "--config", broken.toString(), "--print-config");
      assertThat(badYaml.exitCode()).isEqualTo(2);
      seen.add(badYaml.out() + badYaml.err());
      CliRun badSet =
          CliRun.of(
              "run",
              "--config",
              config.toString(),
              "--set",
              "kafka.properties.ssl.key.password:MARK-set-10");
      assertThat(badSet.exitCode()).isEqualTo(2);
      seen.add(badSet.out() + badSet.err());
      // a library's failure that quotes the catalog URI (SQLite cannot open the database)
      CliRun jdbc =
          CliRun.of(
              "inspect",
              "--config",
              config.toString(),
              "--set",
              "catalog.type=jdbc",
              "--set",
              "catalog.uri=jdbc:sqlite:"
                  + dir.resolve("missing-dir/catalog.db")
                  + "?password=MARK-jdbc-11");
      assertThat(jdbc.exitCode()).isNotZero();
      seen.add(jdbc.out() + jdbc.err());

      URI rest = flink.getRestAddress().get();
      JsonNode jobs = get(rest, "/jobs/overview");
      assertThat(jobs.get("jobs")).isNotEmpty();
      seen.add(jobs.toString());
      seen.add(get(rest, "/jobmanager/config").toString());
      for (JsonNode job : jobs.get("jobs")) {
        String id = job.get("jid").asText();
        for (String path :
            List.of("", "/config", "/jobmanager/config", "/plan", "/exceptions", "/checkpoints")) {
          seen.add(get(rest, "/jobs/" + id + path).toString());
        }
        JsonNode userConfig =
            get(rest, "/jobs/" + id + "/config").at("/execution-config/user-config");
        assertThat(userConfig.get("kafka.properties.sasl.jaas.config").asText())
            .as("the Flink UI shows the job's parameters, masked")
            .isEqualTo("******");
      }
    }
    seen.add(logs.toString());
    assertThat(logs.toString()).as("logs were captured").contains("spatial-ingest");
    for (String text : seen) {
      for (String mark : MARKS) {
        assertThat(text).as("no %s in output", mark).doesNotContain(mark);
      }
    }
  }

  private static JsonNode get(URI rest, String path) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(rest.resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }
}
