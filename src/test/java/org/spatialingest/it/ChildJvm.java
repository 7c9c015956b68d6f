package org.spatialingest.it;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A Java process started by a test (same JDK as the test), with its own classpath, stdout+stderr in
 * a log file. {@link #close()} stops it and its children: SIGTERM first, SIGKILL after a grace
 * period.
 */
public final class ChildJvm implements AutoCloseable {
  /**
   * Every child runs C1 only with the serial collector, before its own flags: a test's JVMs (a
   * standalone cluster's JobManager and TaskManagers, a {@code flink run} client, a CLI, a broker)
   * live seconds to minutes, too short for C2 compiling and parallel GC threads to pay back on 2
   * cores. The short chaos run with its cluster on these flags: 229 s of CPU (user + sys) against
   * 374 s with the JVM's defaults on its daemons (tests.md, "How the suite runs"). Benchmarks start
   * their JVMs with {@code bench.ChildJvm}, not this. The code cache is reserved at the tiered
   * default (240 MB) because C1 alone reserves 48 MB, which a TaskManager can fill.
   */
  static final List<String> TEST_JVM =
      List.of("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m", "-XX:+UseSerialGC");

  private final String name;
  private final Process process;
  private final Path output;

  private ChildJvm(String name, Process process, Path output) {
    this.name = name;
    this.process = process;
    this.output = output;
  }

  /**
   * @param classpath jars (or directories) of the child
   * @param env extra environment variables (added to a copy of this process's environment)
   * @param output file receiving the child's stdout and stderr
   */
  public static ChildJvm start(
      String name,
      List<Path> classpath,
      List<String> jvmArgs,
      String mainClass,
      List<String> args,
      Map<String, String> env,
      Path output)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(TEST_JVM);
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(
        classpath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)));
    command.add(mainClass);
    command.addAll(args);
    Files.createDirectories(output.getParent());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().putAll(env);
    return new ChildJvm(name, builder.start(), output);
  }

  public String name() {
    return name;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** Waits for the process to end; returns its exit code, or fails after {@code timeout}. */
  public int waitFor(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError(
          name + " did not finish within " + timeout + "; output:\n" + outputTail(60));
    }
    return process.exitValue();
  }

  public String output() {
    try {
      return Files.exists(output) ? Files.readString(output, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String outputTail(int lines) {
    List<String> all = output().lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  /** SIGKILL, no grace: what {@code kill -9} does. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    List<ProcessHandle> children = process.descendants().toList();
    process.destroy();
    children.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  /**
   * A TCP port free on loopback right now, below Linux's ephemeral range (32768–60999): a port
   * picked by the kernel from that range (port 0) can be taken by any outgoing connection (a Kafka
   * or HTTP client) before the child binds it, which once failed a JobManager's REST endpoint with
   * a BindException. The race left is with another test picking the same port at random.
   */
  public static int freePort() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = random.nextInt(20_000, 32_768);
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        socket.setReuseAddress(true);
        return port;
      } catch (IOException taken) {
        // another one
      }
    }
    throw new UncheckedIOException(new IOException("no free port in 20000-32767 after 200 tries"));
  }

  /**
   * Polls {@code condition} every 250 ms until it is true; fails with {@code what} after {@code
   * timeout}.
   */
  public static void await(String what, Duration timeout, Check condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        if (condition.ok()) {
          return;
        }
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(250);
    }
    AssertionError error =
        new AssertionError("timed out after " + timeout + " waiting for " + what);
    if (last != null) {
      error.addSuppressed(last);
    }
    throw error;
  }

  @FunctionalInterface
  public interface Check {
    boolean ok() throws Exception;
  }
}
