package org.spatialingest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link BenchChild} in its own JVM: the test classpath of this JVM, the same -Xmx and GC for every run, stdout and
 * stderr to {@code <dir>/<name>.log}, a GC log next to it, and a JFR recording when asked.
 */
final class ChildJvm {
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

  static ChildJvm start(Path dir, String variant, String phase, BenchSettings settings, Map<String, String> jobKeys,
      boolean jfr) throws IOException {
    String name = phase + "-" + variant;
    Path result = dir.resolve(name + ".json").toAbsolutePath();
    Path ready = dir.resolve(name + ".ready").toAbsolutePath();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + settings.xmx());
    cmd.add("-XX:+UseParallelGC"); // as the test JVMs (surefire argLine)
    cmd.add("-Xlog:gc:file=" + dir.resolve(name + "-gc.log").toAbsolutePath());
    if (jfr) {
      cmd.add("-XX:StartFlightRecording=settings=profile,filename=" + dir.resolve(name + ".jfr").toAbsolutePath());
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(BenchChild.class.getName());
    cmd.add(variant);
    cmd.add(phase);
    cmd.add(result.toString());
    cmd.add(ready.toString());
    cmd.add(Integer.toString(settings.parallelism()));
    jobKeys.forEach((k, v) -> cmd.add(k + "=" + v));
    Path log = dir.resolve(name + ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new ChildJvm(name, p, result, ready);
  }

  /** Waits until the child's job is running (live phase). */
  void awaitReady(long timeoutMillis) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (!Files.exists(ready)) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + " before its job ran; see "
            + name + ".log");
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(name + " not ready after " + timeoutMillis + " ms");
      }
      Thread.sleep(50);
    }
  }

  /** Asks a live child to stop its job with a draining savepoint. */
  void requestStop() throws IOException {
    OutputStream in = process.getOutputStream();
    in.write("stop\n".getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  RunResult awaitResult(long timeoutMinutes) throws Exception {
    if (!process.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException(name + " did not finish within " + timeoutMinutes + " min");
    }
    if (process.exitValue() != 0 || !Files.exists(result)) {
      throw new IllegalStateException(name + " failed (exit " + process.exitValue() + "); see " + name + ".log");
    }
    return new ObjectMapper().readValue(result.toFile(), RunResult.class);
  }
}
