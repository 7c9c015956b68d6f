package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.it.ChildJvm;
import org.spatialingest.local.TelemetryGenerator;

/**
 * A local {@code run} in its own JVM ({@code java -cp ... Main run}, as {@code java -jar} does): it
 * prints its own log file and its checkpoint directory (given with {@code --flink}); after the JVM
 * has exited, the log file holds the run's first line, its last line, and a line logged by a
 * shutdown hook after log4j would formerly have stopped (which used to re-initialise log4j and
 * truncate the file). The run leaves nothing but its log file in its {@code java.io.tmpdir}: its
 * default checkpoint folder and Flink's scratch folders are deleted, a checkpoint directory given
 * with {@code --flink} is kept. So does a {@code demo} (tagged {@code extended}: a whole demo).
 */
class LocalLogFileTest {
  @Test
  void aLocalRunLeavesOnlyItsLogFileInTheTempDirectory(@TempDir Path tmp) throws Exception {
    Path input = input(tmp);
    Path javaTmp = Files.createDirectories(tmp.resolve("java-tmp"));
    int exit;
    String output;
    try (ChildJvm run =
        ChildJvm.start(
            "local run with default checkpoints",
            classpath(),
            List.of("-Xmx512m", "-Djava.io.tmpdir=" + javaTmp),
            Main.class.getName(),
            List.of(
                "run",
                "--set",
                "source=file:" + input,
                "--set",
                "catalog.warehouse=" + tmp.resolve("warehouse"),
                "--set",
                "checkpoint.interval=200ms"),
            Map.of(),
            tmp.resolve("child-output.txt"))) {
      exit = run.waitFor(Duration.ofSeconds(120));
      output = run.output();
    }
    assertThat(exit).as(output).isZero();
    String checkpoints =
        output.lines().filter(l -> l.startsWith("Checkpoints:")).findFirst().orElseThrow();
    assertThat(checkpoints)
        .as("the default checkpoint folder is under the run's temp directory")
        .contains(javaTmp.toUri().toString())
        .contains("deleted when the run ends normally");
    assertThat(output).contains("Summary: 200 records read");
    try (Stream<Path> left = Files.list(javaTmp)) {
      assertThat(left.map(p -> p.getFileName().toString()).toList())
          .as("what the run left in java.io.tmpdir")
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .matches("spatial-ingest-run-\\d{8}-\\d{6}-\\d+\\.log");
    }
  }

  /**
   * Issue #38's "Done when": a {@code demo} in its own JVM leaves nothing in its {@code
   * java.io.tmpdir} but its log file (the embedded broker's log dirs, the run folder with the
   * checkpoints and Flink's scratch folders are gone), and a secret given on its command line is
   * not in that file.
   */
  @Test
  @Tag("extended") // a whole demo (broker, cluster, drain) in a child JVM: 25-99 s here; CI time
  void aDemoLeavesOnlyItsLogFileInTheTempDirectory(@TempDir Path tmp) throws Exception {
    Path javaTmp = Files.createDirectories(tmp.resolve("java-tmp"));
    String secret = "demo-secret-5d7e";
    int exit;
    String output;
    try (ChildJvm demo =
        ChildJvm.start(
            "demo",
            classpath(),
            List.of("-Xmx1g", "-Djava.io.tmpdir=" + javaTmp),
            Main.class.getName(),
            List.of(
                "demo",
                "--duration",
                "3s",
                "--rate",
                "200",
                "--ui-port",
                Integer.toString(ChildJvm.freePort()),
                "--warehouse",
                tmp.resolve("warehouse").toString(),
                "--set",
                "checkpoint.interval=500ms",
                "--set",
                "sink.max-latency=1s",
                "--set",
                "kafka.properties.ssl.truststore.password=" + secret),
            Map.of(),
            tmp.resolve("child-output.txt"))) {
      exit = demo.waitFor(Duration.ofSeconds(300));
      output = demo.output();
    }
    assertThat(exit).as(output).isZero();
    List<Path> left;
    try (Stream<Path> files = Files.list(javaTmp)) {
      left = files.toList();
    }
    assertThat(left.stream().map(p -> p.getFileName().toString()).toList())
        .as("what the demo left in java.io.tmpdir")
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .matches("spatial-ingest-demo-\\d{8}-\\d{6}-\\d+\\.log");
    assertThat(Files.readString(left.get(0)))
        .contains("spatial-ingest demo started")
        .doesNotContain(secret);
  }

  @Test
  @Tag("extended") // ~13 s (a child JVM); CI time
  void localRunLogsToItsOwnFileWhichIsWholeAfterTheJvmExits(@TempDir Path tmp) throws Exception {
    Path input = input(tmp);
    Path checkpoints = tmp.resolve("checkpoints");
    String checkpointsUri = checkpoints.toUri().toString();
    Path javaTmp = Files.createDirectories(tmp.resolve("java-tmp"));

    int exit;
    String output;
    try (ChildJvm run =
        ChildJvm.start(
            "local run",
            classpath(),
            List.of("-Xmx512m", "-Djava.io.tmpdir=" + javaTmp),
            LateShutdownLogging.class.getName(),
            List.of(
                "run",
                "--set",
                "source=file:" + input,
                "--set",
                "catalog.warehouse=" + tmp.resolve("warehouse"),
                "--set",
                "checkpoint.interval=200ms",
                "--flink",
                "execution.checkpointing.dir=" + checkpointsUri),
            Map.of(),
            tmp.resolve("child-output.txt"))) {
      exit = run.waitFor(Duration.ofSeconds(120));
      output = run.output();
    }

    assertThat(exit).as(output).isZero();
    String logLine = output.lines().filter(l -> l.startsWith("Logs:")).findFirst().orElseThrow();
    Path log = Path.of(logLine.substring("Logs:".length()).trim());
    assertThat(log.getParent()).isEqualTo(javaTmp);
    assertThat(log.getFileName().toString()).matches("spatial-ingest-run-\\d{8}-\\d{6}-\\d+\\.log");
    assertThat(output).contains("Checkpoints: " + checkpointsUri + " (filesystem storage; ");
    try (Stream<Path> jobs = Files.list(checkpoints)) {
      assertThat(jobs.toList())
          .as("one folder per job in the --flink checkpoint directory")
          .hasSize(1);
    }
    assertThat(log).isNotEmptyFile();
    String logged = Files.readString(log);
    assertThat(logged)
        .contains("spatial-ingest run started: run --set source=file:")
        .contains("spatial-ingest run ended with exit code 0")
        .contains(LateShutdownLogging.LATE_LINE);
    try (Stream<Path> left = Files.list(javaTmp)) {
      assertThat(left.toList())
          .as("only the log file is left in java.io.tmpdir")
          .containsExactly(log);
    }
  }

  /** 200 records, one a line. */
  private static Path input(Path dir) throws Exception {
    Path input = dir.resolve("in.jsonl");
    TelemetryGenerator generator = new TelemetryGenerator(7, 5, 0, 0);
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      lines.add(
          new String(
              generator.next(1_796_000_000_000L + i).json(),
              java.nio.charset.StandardCharsets.UTF_8));
    }
    Files.write(input, lines);
    return input;
  }

  /** This JVM's classpath, for a child JVM running {@link Main}. */
  static List<Path> classpath() {
    return Stream.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .map(Path::of)
        .toList();
  }
}
