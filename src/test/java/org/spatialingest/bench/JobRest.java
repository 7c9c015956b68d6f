package org.spatialingest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.flink.api.common.JobID;

/**
 * Reads one job's figures from the child's own MiniCluster REST API (loopback, a random port): job
 * metrics, the checkpoint history and configuration, the exception history, and a sum of one
 * operator metric over every subtask. Every call is bounded by a 10 s time-out.
 */
final class JobRest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private final ObjectMapper json = new ObjectMapper();
  private final URI base;
  private final JobID job;

  JobRest(URI restAddress, JobID job) {
    this.base = restAddress;
    this.job = job;
  }

  /** A job-level metric (e.g. {@code numRestarts}), if the metric store has it yet. */
  OptionalLong jobMetric(String name) throws IOException, InterruptedException {
    for (JsonNode m : get("/jobs/" + job + "/metrics?get=" + name)) {
      if (name.equals(m.path("id").asText()) && m.hasNonNull("value")) {
        return OptionalLong.of((long) Double.parseDouble(m.get("value").asText()));
      }
    }
    return OptionalLong.empty();
  }

  /**
   * The sum over all subtasks of every vertex of the operator metrics whose name ends with {@code
   * suffix} (e.g. {@code .spatialSink.stagedBytes}); empty when no vertex has such a metric.
   */
  OptionalLong operatorMetricSum(String suffix) throws IOException, InterruptedException {
    long sum = 0;
    boolean found = false;
    for (JsonNode vertex : get("/jobs/" + job).path("vertices")) {
      String path =
          "/jobs/" + job + "/vertices/" + vertex.path("id").asText() + "/subtasks/metrics";
      List<String> ids = new ArrayList<>();
      for (JsonNode m : get(path)) {
        if (m.path("id").asText().endsWith(suffix)) {
          ids.add(m.path("id").asText());
        }
      }
      if (!ids.isEmpty()) {
        List<String> encoded =
            ids.stream().map(id -> URLEncoder.encode(id, StandardCharsets.UTF_8)).toList();
        for (JsonNode m : get(path + "?agg=sum&get=" + String.join(",", encoded))) {
          sum += (long) m.path("sum").asDouble();
          found = true;
        }
      }
    }
    return found ? OptionalLong.of(sum) : OptionalLong.empty();
  }

  /**
   * {@code /jobs/<id>/checkpoints}: counts, summary and the history (as long as
   * web.checkpoints.history allows).
   */
  JsonNode checkpoints() throws IOException, InterruptedException {
    return get("/jobs/" + job + "/checkpoints");
  }

  /** The checkpoint storage the job really uses, e.g. {@code FileSystemCheckpointStorage}. */
  String checkpointStorage() throws IOException, InterruptedException {
    return get("/jobs/" + job + "/checkpoints/config").path("checkpoint_storage").asText("?");
  }

  /** How many failures the job's exception history holds (each one failed or restarted the job). */
  int failureCount() throws IOException, InterruptedException {
    return failures().size();
  }

  /** The first failure of the job (the one that caused the first restart), or "unknown". */
  String firstFailure() throws IOException, InterruptedException {
    JsonNode entries = failures();
    if (entries.isEmpty()) {
      return "unknown (no exception history)";
    }
    JsonNode first = entries.get(entries.size() - 1); // newest first
    String trace = first.path("stacktrace").asText("");
    String cause =
        trace
            .lines()
            .filter(l -> l.startsWith("Caused by:"))
            .reduce((a, b) -> b) // the root cause
            .map(l -> l.substring("Caused by:".length()).trim())
            .orElse(trace.lines().findFirst().orElse(first.path("exceptionName").asText("?")));
    return cause + " (in " + first.path("taskName").asText("the job") + ")";
  }

  private JsonNode failures() throws IOException, InterruptedException {
    return get("/jobs/" + job + "/exceptions").path("exceptionHistory").path("entries");
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET " + path + " -> HTTP " + response.statusCode() + ": " + response.body());
    }
    return json.readTree(response.body());
  }
}
