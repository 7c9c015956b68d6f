package org.spatialingest.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.local.TelemetryGenerator;

/**
 * The packaged cluster jar on a real standalone session cluster: JobManager and TaskManager are
 * separate JVMs started from Flink's own entrypoints, the jar goes in through Flink's own client
 * ({@code flink run -d}), so the job runs in Flink's child-first user-code class loader with only a
 * distribution's lib/ as parent. This is where bundled Flink classes, child-first conflicts,
 * missing or broken service files and a missing Hadoop show up, which the MiniCluster tests (one
 * flat classpath) cannot see.
 *
 * <p>Needs {@code target/spatial-ingest-flink.jar} and {@code target/lib}: runs in the failsafe
 * {@code integration-test} phase, after {@code package}.
 */
class FlinkRunClusterIT {
  static final Path BUILD =
      Path.of(System.getProperty("spatialingest.build.dir", "target")).toAbsolutePath();

  /** Class-loading failures that must not appear in any cluster or client log. */
  static final Pattern LINKAGE_PROBLEMS =
      Pattern.compile(
          "NoClassDefFoundError|ClassNotFoundException|NoSuchMethodError|NoSuchFieldError|LinkageError"
              + "|IncompatibleClassChangeError|ServiceConfigurationError|loader constraint violation"
              + "|ClassCastException|IllegalAccessError");

  /**
   * Known and harmless: Iceberg probing for the optional Dropwizard metrics classes; the
   * JobManager's delegation-token probe for Hadoop (the cluster has no Hadoop in lib/; the job
   * brings its own, see the pom); the client probing for the YARN command line (no flink-yarn in a
   * plain distribution).
   */
  static final Pattern EXPECTED =
      Pattern.compile(
          "Dropwizard|com\\.codahale|Hadoop FS is not available \\(not packaged with this application\\)"
              + "|org\\.apache\\.flink\\.yarn\\.cli\\.FlinkYarnSessionCli");

  @Test
  void clusterJarRunsOnAStandaloneSessionClusterSubmittedWithFlinkRun(@TempDir Path tmp)
      throws Exception {
    Path jobJar = BUILD.resolve("spatial-ingest-flink.jar");
    assertThat(jobJar).as("cluster jar (run `mvn package` first)").isRegularFile();
    List<Path> lib = StandaloneFlinkCluster.distributionLib(BUILD.resolve("lib"));

    String topic = "cluster-it";
    int n = 5_000;
    try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
        StandaloneFlinkCluster cluster =
            StandaloneFlinkCluster.start(
                tmp.resolve("flink"),
                lib,
                4,
                Map.of(
                    "execution.checkpointing.dir", tmp.resolve("checkpoints").toUri().toString(),
                    "restart-strategy.type", "none",
                    "metrics.fetcher.update-interval", "1s"))) {
      kafka.createTopic(topic, 2);
      Map<String, TelemetryGenerator.Record> sent =
          TestKit.produce(
              kafka.bootstrapServers(), topic, new TelemetryGenerator(11, 20, 500, 500), n);

      Path warehouse = tmp.resolve("warehouse");
      Map<String, String> job =
          Map.ofEntries(
              Map.entry("kafka.bootstrap-servers", kafka.bootstrapServers()),
              Map.entry("kafka.topic", topic),
              Map.entry("kafka.group-id", "cluster-it"),
              Map.entry("kafka.starting-offsets", "earliest"),
              Map.entry("catalog.type", "hadoop"),
              Map.entry("catalog.warehouse", warehouse.toUri().toString()),
              Map.entry("checkpoint.interval", "1s"),
              Map.entry("parallelism.source", "2"),
              Map.entry("parallelism.transform", "2"),
              // a separate sink vertex, so the REST API shows rows crossing from transform to sink
              // writer
              Map.entry("parallelism.sink", "1"),
              Map.entry("sink.memory-budget", "8MB"),
              Map.entry("sink.target-file-size", "1MB"),
              Map.entry("sink.max-latency", "2s"));
      List<String> programArgs = new ArrayList<>(List.of("run"));
      job.forEach((k, v) -> programArgs.addAll(List.of("--set", k + "=" + v)));

      long submitStart = System.nanoTime();
      StandaloneFlinkCluster.Submission submission =
          cluster.submitDetached(jobJar, "org.spatialingest.cli.Main", programArgs);
      System.out.printf(
          "flink run -d returned %d after %d ms%n",
          submission.exitCode(), (System.nanoTime() - submitStart) / 1_000_000);
      assertThat(submission.exitCode())
          .as(
              "flink run exit code; output:\n%s\nclient log:\n%s",
              submission.output(), cluster.logTail("client", 80))
          .isZero();
      assertThat(submission.jobId())
          .as("JobID printed by flink run:\n%s", submission.output())
          .isNotNull();
      String jobId = submission.jobId();

      try {
        cluster.awaitRunning(jobId, Duration.ofSeconds(60));

        JobConfig config = JobConfig.fromMap(job);
        List<Record> rows = new ArrayList<>();
        ChildJvm.await(
            n + " rows committed to the Iceberg table",
            Duration.ofSeconds(120),
            () -> {
              cluster.assertRunning(jobId);
              if (!Files.exists(warehouse)) {
                return false;
              }
              rows.clear();
              rows.addAll(TestKit.rows(TestKit.table(config)));
              return rows.size() >= n;
            });
        assertThat(rows).hasSize(n);
        Set<String> ids = new HashSet<>();
        rows.forEach(r -> ids.add((String) r.getField("id")));
        assertThat(ids).isEqualTo(sent.keySet());

        // the REST API shows the transform's rows arriving at the sink writer (metrics refresh
        // every second here)
        List<String> names = new ArrayList<>();
        long[] sinkRowsIn = {0};
        ChildJvm.await(
            "REST API metrics: " + n + " rows read by the sink writer vertex",
            Duration.ofSeconds(60),
            () -> {
              names.clear();
              for (JsonNode v : cluster.get("/jobs/" + jobId).path("vertices")) {
                String name = v.path("name").asText();
                long in = v.path("metrics").path("read-records").asLong();
                names.add(
                    name
                        + " (p="
                        + v.path("parallelism").asInt()
                        + ", "
                        + v.path("status").asText()
                        + ", in="
                        + in
                        + ", out="
                        + v.path("metrics").path("write-records").asLong()
                        + ")");
                if (name.contains("spatial-sink") && name.contains("Writer")) {
                  sinkRowsIn[0] = in;
                }
              }
              return sinkRowsIn[0] >= n;
            });
        System.out.println("job vertices: " + String.join(" | ", names));
        assertThat(sinkRowsIn[0])
            .as("rows the sink writer vertex read, per REST API; vertices %s", names)
            .isEqualTo(n);
      } finally {
        if ("RUNNING".equals(cluster.jobState(jobId))) {
          cluster.cancel(jobId);
          ChildJvm.await(
              "job " + jobId + " CANCELED",
              Duration.ofSeconds(60),
              () -> "CANCELED".equals(cluster.jobState(jobId)));
        }
      }

      for (String log : List.of("jobmanager", "taskmanager", "client")) {
        List<String> problems =
            Files.readAllLines(cluster.logFile(log)).stream()
                .filter(l -> LINKAGE_PROBLEMS.matcher(l).find() && !EXPECTED.matcher(l).find())
                .toList();
        assertThat(problems).as("class-loading problems in %s.log", log).isEmpty();
      }
    }
  }

  /**
   * Static checks of the cluster jar against the same lib/: the only Flink-namespace classes in it
   * are those of the artifacts bundled on purpose (connectors, Iceberg runtime), none of Flink's
   * own; no logging backend; what S3FileIO and the Hadoop catalog need is inside; and every service
   * file whose interface is loadable names only loadable providers (a dangling provider makes
   * ServiceLoader throw, as the Iceberg bundle's java.time.chrono.Chronology file does).
   */
  @Test
  void clusterJarContents() throws Exception {
    Path jobJar = BUILD.resolve("spatial-ingest-flink.jar");
    assertThat(jobJar).as("cluster jar (run `mvn package` first)").isRegularFile();
    Path targetLib = BUILD.resolve("lib");
    Set<String> connectorEntries = new HashSet<>();
    try (var jars = Files.list(targetLib)) {
      // the connectors, and iceberg-flink-runtime, which ships one Flink-namespace class of its own
      // (org.apache.flink.table.api.runtime.types.FlinkScalaKryoInstantiator; not in this lib/, so
      // it is used from
      // the job jar: org.apache.flink.* is parent-first, and falls back to the job jar when the
      // parent lacks it)
      for (Path jar :
          jars.filter(
                  p ->
                      p.getFileName()
                          .toString()
                          .matches(
                              "(flink-connector-(base|kafka)|iceberg-flink-runtime-2\\.1)-.*\\.jar"))
              .toList()) {
        connectorEntries.addAll(entries(jar));
      }
    }
    assertThat(connectorEntries).isNotEmpty();
    Set<String> entries = entries(jobJar);
    assertThat(
            entries.stream()
                .filter(
                    e ->
                        e.startsWith("org/apache/flink/")
                            && e.endsWith(".class")
                            && !connectorEntries.contains(e))
                .toList())
        .as("Flink classes from Flink itself")
        .isEmpty();
    assertThat(
            entries.stream()
                .filter(
                    e ->
                        e.matches(
                            "(org/slf4j|org/apache/logging/log4j|org/apache/log4j)/.*\\.class"))
                .toList())
        .as("logging classes (the cluster provides them)")
        .isEmpty();
    assertThat(entries)
        .contains(
            "org/spatialingest/cli/Main.class",
            "org/apache/iceberg/aws/s3/S3FileIO.class",
            "software/amazon/awssdk/services/s3/S3Client.class",
            "org/apache/hadoop/conf/Configuration.class",
            "org/apache/iceberg/rest/RESTCatalog.class");
    assertThat(entries).doesNotContain("META-INF/services/java.time.chrono.Chronology");

    List<Path> lib = StandaloneFlinkCluster.distributionLib(targetLib);
    List<URL> urls = new ArrayList<>();
    urls.add(jobJar.toUri().toURL());
    for (Path p : lib) {
      urls.add(p.toUri().toURL());
    }
    List<String> dangling = new ArrayList<>();
    try (ZipFile zip = new ZipFile(jobJar.toFile());
        URLClassLoader loader =
            new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      for (ZipEntry e :
          zip.stream()
              .filter(e -> e.getName().startsWith("META-INF/services/") && !e.isDirectory())
              .toList()) {
        String service = e.getName().substring("META-INF/services/".length());
        if (!exists(loader, service)) {
          continue; // interface not loadable (e.g. relocated inside a bundle): ServiceLoader never
          // reads the file
        }
        try (InputStream in = zip.getInputStream(e)) {
          for (String line :
              new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
            String provider = line.replaceAll("#.*", "").trim();
            if (!provider.isEmpty() && !exists(loader, provider)) {
              dangling.add(service + " -> " + provider);
            }
          }
        }
      }
    }
    assertThat(dangling).as("service providers that do not exist").isEmpty();
  }

  private static boolean exists(ClassLoader loader, String className) {
    return loader.getResource(className.replace('.', '/') + ".class") != null;
  }

  private static Set<String> entries(Path jar) throws IOException {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      Set<String> names = new TreeSet<>();
      zip.stream().forEach(e -> names.add(e.getName()));
      return names;
    }
  }
}
