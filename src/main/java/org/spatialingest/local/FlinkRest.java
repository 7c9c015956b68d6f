package org.spatialingest.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** GETs JSON from the REST API of a local Flink cluster ({@code http://localhost:<rest.port>}). */
final class FlinkRest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  private final URI base;

  FlinkRest(int port) {
    this.base = URI.create("http://localhost:" + port);
  }

  URI base() {
    return base;
  }

  /** The JSON body of {@code path}; an IOException for a non-2xx answer or no answer. */
  JsonNode get(String path) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).GET().build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException(
          "GET " + path + " answered " + response.statusCode() + ": " + response.body());
    }
    return JSON.readTree(response.body());
  }
}
