package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link BenchChild} in its own JVM: the test classpath of this JVM, the same -Xmx and GC for
 * every run, stdout and stderr to {@code <dir>/<name>.log}, a GC log next to it, and a JFR
 * recording when asked. Every wait on it is bounded; a child that failed or timed out is reported
 * with its own reason ({@code <name>.failure}) and is never left running.
 */
final class ChildJvm implements AutoCloseable {
  static final List<String> FLINK_ADD_OPENS =
      java.util.stream.Stream.of(
              "java.lang",
              "java.lang.reflect",
              "java.io",
              "java.net",
              "java.nio",
              "sun.nio.ch",
              "java.text",
              "java.time",
              "java.util",
              "java.util.concurrent",
              "java.util.concurrent.atomic",
              "java.util.concurrent.locks")
          .map(p -> "--add-opens=java.base/" + p + "=ALL-UNNAMED")
          .toList();

  private final String name;
  private final Process process;
  private final Path result;
  private final Path ready;

  private ChildJvm(String name, Process process, Path result, Path ready) {
    this.name = name;
    this.process = process;
    this.result = result;
    this.ready = ready;
  }

  /** Where a child writes why it failed: next to its result. */
  static Path failureFile(Path result) {
    return result.resolveSibling(result.getFileName().toString().replace(".json", ".failure"));
  }

  /**
   * Starts the child; it bounds each of its own waits by {@code settings.phaseTimeout()}.
   *
   * @param stopWait the live child's bound on its wait for {@link #requestStop()}
   */
  static ChildJvm start(
      Path dir,
      String variant,
      String phase,
      BenchSettings settings,
      Map<String, String> jobKeys,
      Duration stopWait,
      boolean jfr)
      throws IOException {
    return start(
        dir, phase + "-" + variant, variant, phase, settings, jobKeys, stopWait, jfr, null, 0);
  }

  /**
   * As above, under its own {@code name} (its files are {@code <dir>/<name>.*}); with {@code
   * classes} not null, the child runs the main classes of another build: {@code classes} replaces
   * this build's {@code target/classes} on the classpath (the harness stays this build's). A
   * throughput child first runs {@code warmups} identical jobs of its own (see {@link BenchChild}).
   */
  static ChildJvm start(
      Path dir,
      String name,
      String variant,
      String phase,
      BenchSettings settings,
      Map<String, String> jobKeys,
      Duration stopWait,
      boolean jfr,
      Path classes,
      int warmups)
      throws IOException {
    Path result = dir.resolve(name + ".json").toAbsolutePath();
    Path ready = dir.resolve(name + ".ready").toAbsolutePath();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + settings.xmx());
    cmd.add("-XX:+UseParallelGC"); // as the test JVMs (surefire argLine)
    // the module openings Flink's own distribution starts its JVMs with (env.java.opts.all): Kryo
    // needs them for the records Iceberg's compaction operators exchange (java.nio.ByteBuffer)
    cmd.addAll(FLINK_ADD_OPENS);
    // compiler threads stay, so their CPU time can be read to the end (ArrivalProbe.jitCpuNanos)
    cmd.add("-XX:-UseDynamicNumberOfCompilerThreads");
    cmd.addAll(settings.jitFlags());
    cmd.add("-Xlog:gc:file=" + dir.resolve(name + "-gc.log").toAbsolutePath());
    if (jfr) {
      // without it, samples in inlined frames are charged to the wrong method
      cmd.add("-XX:+UnlockDiagnosticVMOptions");
      cmd.add("-XX:+DebugNonSafepoints");
      cmd.add(
          "-XX:StartFlightRecording=settings=profile,filename="
              + dir.resolve(name + ".jfr").toAbsolutePath());
    }
    cmd.add("-cp");
    cmd.add(classpath(classes));
    cmd.add(BenchChild.class.getName());
    cmd.add(variant);
    cmd.add(phase);
    cmd.add(result.toString());
    cmd.add(ready.toString());
    cmd.add(Integer.toString(settings.parallelism()));
    cmd.add(Long.toString(settings.phaseTimeout().toMillis()));
    cmd.add(Long.toString(stopWait.toMillis()));
    cmd.add(Integer.toString(warmups));
    jobKeys.forEach((k, v) -> cmd.add(k + "=" + v));
    Path log = dir.resolve(name + ".log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new ChildJvm(name, p, result, ready);
  }

  /** This JVM's classpath, with {@code classes} (if not null) in place of target/classes. */
  static String classpath(Path classes) {
    String cp = System.getProperty("java.class.path");
    if (classes == null) {
      return cp;
    }
    String own = Path.of("target", "classes").toString();
    List<String> entries = new ArrayList<>();
    boolean replaced = false;
    for (String e : cp.split(java.io.File.pathSeparator)) {
      if (!replaced && Path.of(e).normalize().endsWith(own)) {
        entries.add(classes.toAbsolutePath().toString());
        replaced = true;
      } else {
        entries.add(e);
      }
    }
    if (!replaced) {
      throw new IllegalArgumentException("no target/classes on the classpath to replace: " + cp);
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  static Path consumedFile(Path result) {
    return result.resolveSibling(result.getFileName().toString().replace(".json", ".consumed"));
  }

  /** How many records the child's job has read so far (live phase), 0 before it reports. */
  long consumed() throws IOException {
    Path file = consumedFile(result);
    return Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : 0;
  }

  /** Waits until the child's job is running (live phase). */
  void awaitReady(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(ready)) {
      ensureAlive();
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            name
                + ": its job was not running within "
                + timeout
                + " (phase-timeout); see "
                + name
                + ".log");
      }
      Thread.sleep(50);
    }
  }

  /**
   * Throws with the child's own reason if it has exited (a live child only exits by itself when it
   * failed).
   */
  void ensureAlive() throws IOException {
    if (!process.isAlive()) {
      throw failed();
    }
  }

  /** Asks a live child to stop its job with a draining savepoint. */
  void requestStop() throws IOException {
    OutputStream in = process.getOutputStream();
    in.write("stop\n".getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  RunResult awaitResult(Duration timeout) throws Exception {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      throw new IllegalStateException(
          name + " did not end within " + timeout + " and was killed; see " + name + ".log");
    }
    if (process.exitValue() != 0 || !Files.exists(result)) {
      throw failed();
    }
    return new ObjectMapper().readValue(result.toFile(), RunResult.class);
  }

  /** Kills the child if it still runs (after a failure elsewhere). */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  private IllegalStateException failed() throws IOException {
    Path failure = failureFile(result);
    String why =
        Files.exists(failure)
            ? Files.readString(failure)
            : "no reason written (exit " + process.exitValue() + ")";
    return new IllegalStateException(name + " failed: " + why + "; see " + name + ".log");
  }
}
