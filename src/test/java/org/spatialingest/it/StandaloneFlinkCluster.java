package org.spatialingest.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A standalone Flink session cluster on loopback, started the way {@code bin/start-cluster.sh} does
 * it: a JobManager JVM ({@code StandaloneSessionClusterEntrypoint}) and TaskManager JVMs ({@code
 * TaskManagerRunner}), each with the JVM memory flags and dynamic properties Flink's own {@code
 * BashJavaUtils} derives from the generated {@code conf/config.yaml}, and jobs submitted with
 * Flink's client {@code CliFrontend} (what {@code bin/flink} runs) in a third JVM.
 *
 * <p>The classpath of all three is a stand-in for a Flink distribution's {@code lib/}: flink-dist
 * is not served by the Maven repository here, so it is assembled from the Flink jars Maven copied
 * to {@code target/lib} plus the third-party jars flink-dist bundles and the log4j jars {@code
 * lib/} holds ({@link #distributionLib}). Never the job jar or anything it bundles.
 */
public final class StandaloneFlinkCluster implements AutoCloseable {
  /**
   * File-name prefixes of the jars in target/lib that a Flink 2.1 distribution ships in lib/
   * (inside flink-dist).
   */
  static final List<String> DISTRIBUTION_JARS =
      List.of(
          "flink-", // flink-core, -runtime, -streaming-java, -clients, -rpc-*, -shaded-*,
          // -table-runtime, -cep, ...
          "commons-cli-",
          "commons-collections-",
          "commons-compress-",
          "commons-io-",
          "commons-lang3-",
          "commons-math3-",
          "commons-text-",
          "kryo-",
          "minlog-",
          "objenesis-",
          "reflectasm-",
          "snakeyaml-engine-",
          "javassist-",
          "async-profiler-",
          "lz4-java-",
          "icu4j-",
          "slf4j-api-",
          "log4j-api-",
          "log4j-core-",
          "log4j-slf4j2-impl-");

  /**
   * Flink jars in target/lib that are the job's, not the cluster's: the Kafka connector is never in
   * a distribution, and connector-base is left out so the test proves the job jar carries it (a
   * distribution has it only shaded inside flink-connector-files; same 2.1.3 classes, loaded
   * parent-first from there when present).
   */
  static final List<String> NOT_IN_DISTRIBUTION =
      List.of("flink-connector-kafka-", "flink-connector-base-");

  /**
   * The Java 17 module flags ({@code env.java.opts.all}) Flink's scripts pass to every JVM
   * (JobManager, TaskManager, client), read from the project's own {@code flink-conf/config.yaml},
   * so the test proves that file works. Without them the client fails on Java 17 while building the
   * job graph: InaccessibleObjectException "module java.base does not opens java.util"
   * (DataStreamV2SinkTransformationTranslator).
   */
  static final String JAVA_OPTS_ALL =
      org.apache.flink.configuration.GlobalConfiguration.loadConfiguration(
              Path.of("flink-conf").toAbsolutePath().toString())
          .get(org.apache.flink.configuration.CoreOptions.FLINK_JVM_OPTIONS);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern RESOURCE_ID = Pattern.compile("ResourceID: (\\S+)");
  private static final Pattern JOB_ID =
      Pattern.compile("Job has been submitted with JobID ([0-9a-f]{32})");

  private final Path home;
  private final Path conf;
  private final List<Path> lib;
  private final int restPort;
  private final List<ChildJvm> processes = new ArrayList<>();
  private final List<ChildJvm> taskManagers = new ArrayList<>();
  private final List<String> taskManagerJvmArgs = new ArrayList<>();
  private List<List<String>> taskManagerParams;
  private int taskManagersStarted;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private StandaloneFlinkCluster(Path home, List<Path> lib, int restPort) {
    this.home = home;
    this.conf = home.resolve("conf");
    this.lib = lib;
    this.restPort = restPort;
  }

  /**
   * The stand-in for a distribution's lib/, picked from Maven's copy of the dependencies in {@code
   * targetLib}.
   */
  public static List<Path> distributionLib(Path targetLib) throws IOException {
    try (Stream<Path> jars = Files.list(targetLib)) {
      List<Path> lib =
          jars.filter(
                  p -> {
                    String n = p.getFileName().toString();
                    return n.endsWith(".jar")
                        && DISTRIBUTION_JARS.stream().anyMatch(n::startsWith)
                        && NOT_IN_DISTRIBUTION.stream().noneMatch(n::startsWith);
                  })
              .sorted()
              .toList();
      if (lib.stream().noneMatch(p -> p.getFileName().toString().startsWith("flink-runtime-"))) {
        throw new IllegalStateException(
            "no flink-runtime jar in " + targetLib + " (run `mvn package` first)");
      }
      return lib;
    }
  }

  /**
   * Writes {@code home/conf/config.yaml} and {@code log4j.properties} and starts a JobManager and
   * one TaskManager; returns once the TaskManager has registered its slots.
   */
  public static StandaloneFlinkCluster start(
      Path home, List<Path> lib, int slots, Map<String, String> extraConf) throws Exception {
    return start(home, lib, 1, slots, extraConf, List.of());
  }

  /**
   * Starts a JobManager and {@code taskManagers} TaskManagers of {@code slots} slots each; {@code
   * taskManagerJvmArgs} go to every TaskManager JVM (also those {@link #startTaskManager()} adds
   * later).
   */
  public static StandaloneFlinkCluster start(
      Path home,
      List<Path> lib,
      int taskManagers,
      int slots,
      Map<String, String> extraConf,
      List<String> taskManagerJvmArgs)
      throws Exception {
    StandaloneFlinkCluster cluster = new StandaloneFlinkCluster(home, lib, ChildJvm.freePort());
    cluster.taskManagerJvmArgs.addAll(taskManagerJvmArgs);
    try {
      cluster.writeConf(slots, extraConf);
      cluster.startProcesses(taskManagers);
      cluster.awaitSlots(taskManagers, taskManagers * slots, Duration.ofSeconds(120));
      return cluster;
    } catch (Exception | Error e) {
      cluster.close();
      throw e;
    }
  }

  private void writeConf(int slots, Map<String, String> extraConf) throws IOException {
    Files.createDirectories(conf);
    Files.createDirectories(home.resolve("log"));
    Files.createDirectories(home.resolve("tmp"));
    // Flat dotted keys are valid standard YAML for Flink 2.x's config.yaml.
    Map<String, String> c = new LinkedHashMap<>();
    c.put("jobmanager.rpc.address", "localhost");
    c.put("jobmanager.rpc.port", Integer.toString(ChildJvm.freePort()));
    c.put("jobmanager.bind-host", "localhost");
    c.put("jobmanager.memory.process.size", "768m");
    c.put("taskmanager.host", "localhost");
    c.put("taskmanager.bind-host", "localhost");
    c.put("taskmanager.numberOfTaskSlots", Integer.toString(slots));
    c.put("taskmanager.memory.process.size", "1280m");
    c.put("taskmanager.memory.managed.fraction", "0.05");
    // taskmanager.rpc.port, taskmanager.data.port and blob.server.port default to 0 = a free port
    c.put("rest.address", "localhost");
    c.put("rest.bind-address", "localhost");
    c.put("rest.port", Integer.toString(restPort));
    c.put("parallelism.default", "1");
    c.put("io.tmp.dirs", home.resolve("tmp").toString());
    c.put("high-availability.type", "NONE");
    c.put("env.java.opts.all", JAVA_OPTS_ALL);
    c.putAll(extraConf);
    StringBuilder yaml = new StringBuilder("# generated by StandaloneFlinkCluster (test)\n");
    c.forEach((k, v) -> yaml.append(k).append(": \"").append(v).append("\"\n"));
    Files.writeString(conf.resolve("config.yaml"), yaml.toString());
    Files.writeString(
        conf.resolve("log4j.properties"),
        """
        rootLogger.level = INFO
        rootLogger.appenderRef.file.ref = MainAppender
        appender.main.name = MainAppender
        appender.main.type = File
        appender.main.append = true
        appender.main.fileName = ${sys:log.file}
        appender.main.layout.type = PatternLayout
        appender.main.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-60c %x - %m%n
        logger.metrics.name = org.apache.flink.metrics.MetricGroup
        logger.metrics.level = ERROR
        logger.kafka.name = org.apache.kafka
        logger.kafka.level = WARN
        """);
  }

  private void startProcesses(int taskManagerCount) throws Exception {
    // what jobmanager.sh / taskmanager.sh do: BashJavaUtils turns config.yaml into JVM flags +
    // dynamic properties
    List<List<String>> jm = bashJavaUtils("GET_JM_RESOURCE_PARAMS");
    taskManagerParams = bashJavaUtils("GET_TM_RESOURCE_PARAMS");
    processes.add(
        startDaemon(
            "jobmanager",
            jm,
            List.of(),
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"));
    for (int i = 0; i < taskManagerCount; i++) {
      startTaskManagerProcess();
    }
  }

  /**
   * Starts one more TaskManager (as {@code bin/taskmanager.sh start} does); its log is {@link
   * #logFile} of its name.
   */
  public String startTaskManager() throws Exception {
    return startTaskManagerProcess().name();
  }

  private ChildJvm startTaskManagerProcess() throws IOException {
    // the first keeps the plain name the single-TaskManager tests read logs by
    String name = taskManagersStarted++ == 0 ? "taskmanager" : "taskmanager-" + taskManagersStarted;
    ChildJvm tm =
        startDaemon(
            name,
            taskManagerParams,
            taskManagerJvmArgs,
            "org.apache.flink.runtime.taskexecutor.TaskManagerRunner");
    processes.add(tm);
    taskManagers.add(tm);
    return tm;
  }

  /** The TaskManager processes still alive, oldest first. */
  public List<ChildJvm> liveTaskManagers() {
    return taskManagers.stream().filter(ChildJvm::isAlive).toList();
  }

  /**
   * The ResourceID a TaskManager process registered with (as {@code /taskmanagers} and {@code
   * /jobs/<id>/taskmanagers} name it), read from its log; null before it logged it.
   */
  public String resourceId(ChildJvm taskManager) throws IOException {
    Path log = logFile(taskManager.name());
    if (!Files.exists(log)) {
      return null;
    }
    try (Stream<String> lines = Files.lines(log)) {
      return lines
          .map(RESOURCE_ID::matcher)
          .filter(Matcher::find)
          .map(m -> m.group(1))
          .findFirst()
          .orElse(null);
    }
  }

  /**
   * {@code kill -9} of a TaskManager process: no shutdown hook, no deregistration, the JobManager
   * finds out late.
   */
  public void killTaskManager(ChildJvm taskManager) throws InterruptedException {
    taskManager.kill();
  }

  /**
   * Waits until the JobManager sees {@code count} TaskManagers (after a kill it forgets the dead
   * one by heartbeat).
   */
  public void awaitTaskManagers(int count, Duration timeout) throws Exception {
    ChildJvm.await(
        count + " registered TaskManagers",
        timeout,
        () -> get("/overview").path("taskmanagers").asInt() == count);
  }

  private List<List<String>> bashJavaUtils(String command) throws Exception {
    ChildJvm utils =
        ChildJvm.start(
            "BashJavaUtils " + command,
            lib,
            List.of(),
            "org.apache.flink.runtime.util.bash.BashJavaUtils",
            List.of(command, "--configDir", conf.toString()),
            Map.of(),
            home.resolve("log").resolve(command + ".out"));
    try {
      int exit = utils.waitFor(Duration.ofSeconds(60));
      List<List<String>> results =
          utils
              .output()
              .lines()
              .filter(l -> l.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:"))
              .map(
                  l ->
                      Arrays.stream(
                              l.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length())
                                  .trim()
                                  .split("\\s+"))
                          .filter(s -> !s.isEmpty())
                          .toList())
              .toList();
      if (exit != 0 || results.size() != 2) {
        throw new IllegalStateException(
            command + " failed (exit " + exit + "):\n" + utils.outputTail(40));
      }
      return results; // [0] JVM flags, [1] dynamic properties as "-D", "k=v", ...
    } finally {
      utils.close();
    }
  }

  private ChildJvm startDaemon(
      String name, List<List<String>> params, List<String> extraJvmArgs, String mainClass)
      throws IOException {
    List<String> jvm = new ArrayList<>(params.get(0));
    jvm.addAll(List.of(JAVA_OPTS_ALL.split(" ")));
    jvm.addAll(extraJvmArgs);
    jvm.add("-Dlog.file=" + home.resolve("log").resolve(name + ".log"));
    jvm.add("-Dlog4j.configurationFile=" + conf.resolve("log4j.properties").toUri());
    List<String> args = new ArrayList<>(List.of("--configDir", conf.toString()));
    args.addAll(params.get(1));
    return ChildJvm.start(
        name, lib, jvm, mainClass, args, Map.of(), home.resolve("log").resolve(name + ".out"));
  }

  private void awaitSlots(int taskManagerCount, int slots, Duration timeout) throws Exception {
    ChildJvm.await(
        taskManagerCount + " TaskManagers with " + slots + " slots to register",
        timeout,
        () -> {
          for (ChildJvm p : processes) {
            if (!p.isAlive()) {
              throw new IllegalStateException(
                  p.name() + " exited:\n" + p.outputTail(40) + "\n" + logTail(p.name(), 60));
            }
          }
          JsonNode overview = get("/overview");
          return overview.path("taskmanagers").asInt() >= taskManagerCount
              && overview.path("slots-total").asInt() >= slots;
        });
  }

  /**
   * Runs {@code bin/flink run -d ...}: {@code CliFrontend} in its own JVM, FLINK_CONF_DIR = the
   * generated conf.
   */
  public Submission submitDetached(Path jar, String entryClass, List<String> programArgs)
      throws Exception {
    return submitDetached(List.of(), jar, entryClass, programArgs);
  }

  /**
   * {@code bin/flink run -d <runOptions> ...}, e.g. {@code -s <savepoint>} and {@code -p
   * <parallelism>}.
   */
  public Submission submitDetached(
      List<String> runOptions, Path jar, String entryClass, List<String> programArgs)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("run", "-d"));
    args.addAll(runOptions);
    args.addAll(List.of("-c", entryClass, jar.toString()));
    args.addAll(programArgs);
    Path out = home.resolve("log").resolve("client.out");
    List<String> jvm = new ArrayList<>(List.of(JAVA_OPTS_ALL.split(" ")));
    jvm.addAll(
        List.of(
            "-Xmx512m",
            "-Dlog.file=" + home.resolve("log").resolve("client.log"),
            "-Dlog4j.configurationFile=" + conf.resolve("log4j.properties").toUri()));
    try (ChildJvm client =
        ChildJvm.start(
            "flink-client",
            lib,
            jvm,
            "org.apache.flink.client.cli.CliFrontend",
            args,
            Map.of("FLINK_CONF_DIR", conf.toString()),
            out)) {
      int exit = client.waitFor(Duration.ofSeconds(180));
      String output = client.output();
      Matcher m = JOB_ID.matcher(output);
      return new Submission(exit, m.find() ? m.group(1) : null, output);
    }
  }

  /** What {@code flink run -d} printed and returned. */
  public record Submission(int exitCode, String jobId, String output) {}

  public JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(restUri(path)).timeout(Duration.ofSeconds(10)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET " + path + " -> " + response.statusCode() + ": " + response.body());
    }
    return JSON.readTree(response.body());
  }

  /**
   * The state of a job as {@code /jobs/overview} reports it, or null when the cluster does not know
   * the job.
   */
  public String jobState(String jobId) throws IOException, InterruptedException {
    for (JsonNode job : get("/jobs/overview").path("jobs")) {
      if (job.path("jid").asText().equals(jobId)) {
        return job.path("state").asText();
      }
    }
    return null;
  }

  /** Fails with the job's exceptions and the TaskManager's log tail unless the job is RUNNING. */
  public void assertRunning(String jobId) throws IOException, InterruptedException {
    String state = jobState(jobId);
    if (!"RUNNING".equals(state)) {
      throw new AssertionError(
          "job left RUNNING: "
              + state
              + "\n"
              + get("/jobs/" + jobId + "/exceptions")
              + "\n"
              + logTail("taskmanager", 80));
    }
  }

  /**
   * Waits until the job is RUNNING; a job that FAILED or was CANCELED fails with its exceptions.
   */
  public void awaitRunning(String jobId, Duration timeout) throws Exception {
    ChildJvm.await(
        "job " + jobId + " RUNNING",
        timeout,
        () -> {
          String state = jobState(jobId);
          if ("FAILED".equals(state) || "CANCELED".equals(state)) {
            throw new AssertionError(
                "job " + state + ":\n" + get("/jobs/" + jobId + "/exceptions"));
          }
          return "RUNNING".equals(state);
        });
  }

  public void cancel(String jobId) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(restUri("/jobs/" + jobId + "?mode=cancel"))
                .timeout(Duration.ofSeconds(10))
                .method("PATCH", HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 202) {
      throw new IOException(
          "cancel " + jobId + " -> " + response.statusCode() + ": " + response.body());
    }
  }

  /**
   * What {@code flink stop [--drain] --savepointPath <dir> <jobId>} does, through the REST API:
   * returns the savepoint's path once it completed, or fails with Flink's reason.
   */
  public String stopWithSavepoint(
      String jobId, String targetDirectory, boolean drain, Duration timeout) throws Exception {
    String body =
        JSON.writeValueAsString(Map.of("targetDirectory", targetDirectory, "drain", drain));
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(restUri("/jobs/" + jobId + "/stop"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 202) {
      throw new IOException(
          "stop " + jobId + " -> " + response.statusCode() + ": " + response.body());
    }
    String trigger = JSON.readTree(response.body()).path("request-id").asText();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      JsonNode status = get("/jobs/" + jobId + "/savepoints/" + trigger);
      if ("COMPLETED".equals(status.path("status").path("id").asText())) {
        JsonNode operation = status.path("operation");
        if (operation.has("failure-cause")) {
          throw new SavepointFailed(operation.path("failure-cause").path("stack-trace").asText());
        }
        return operation.path("location").asText();
      }
      Thread.sleep(250);
    }
    throw new AssertionError(
        "stop-with-savepoint of " + jobId + " did not finish within " + timeout);
  }

  /**
   * A stop-with-savepoint that Flink reported as failed (the job then keeps running or fails over).
   */
  public static final class SavepointFailed extends RuntimeException {
    SavepointFailed(String cause) {
      super(cause.length() > 2_000 ? cause.substring(0, 2_000) : cause);
    }
  }

  public URI restUri(String path) {
    return URI.create("http://localhost:" + restPort + path);
  }

  public Path logFile(String name) {
    return home.resolve("log").resolve(name + ".log");
  }

  public String logTail(String name, int lines) {
    try {
      Path log = logFile(name);
      if (!Files.exists(log)) {
        return "(no " + log + ")";
      }
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read log: " + e + ")";
    }
  }

  /**
   * Stops TaskManager then JobManager (SIGTERM, as stop-cluster.sh does; SIGKILL after a grace
   * period).
   */
  @Override
  public void close() {
    for (int i = processes.size() - 1; i >= 0; i--) {
      processes.get(i).close();
    }
  }
}
