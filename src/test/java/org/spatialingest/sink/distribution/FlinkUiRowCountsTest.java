package org.spatialingest.sink.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.Catalogs;

/**
 * Rows cross the exchange to the writers in batches ({@code RowBatch}); the Flink UI still counts
 * rows: after a bounded run, the REST API's vertex metrics of the vertex ending in {@code
 * distribute} (its <i>Records Sent</i>, {@code write-records}) and of the sink writer (its
 * <i>Records Received</i>, {@code read-records}) each equal the rows of the table plus the rows of
 * the rejects table, although far fewer batches crossed.
 */
class FlinkUiRowCountsTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void distributeSendsAndTheWriterReceivesRowsNotBatches(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    Path records = dir.resolve("records.jsonl");
    TelemetryGenerator generator = new TelemetryGenerator(11, 20, 0, 0);
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < 3_000; i++) {
      lines.append(
          new String(generator.next(1_796_000_000_000L + i).json(), StandardCharsets.UTF_8));
      lines.append('\n');
      if (i % 1_000 == 0) {
        lines.append("{not json\n");
      }
    }
    Files.writeString(records, lines);
    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "source",
                "file:" + records,
                "catalog.warehouse",
                dir.resolve("warehouse").toString(),
                "table.name",
                "ui_counts",
                "checkpoint.interval",
                "300ms"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    JobExecutionResult result = env.execute("ui-row-counts");

    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    long rows = TestKit.rows(catalog.loadTable(Catalogs.tableIdentifier(config))).size();
    long rejects = TestKit.rows(catalog.loadTable(Catalogs.rejectsTableIdentifier(config))).size();
    assertThat(rows).isEqualTo(3_000);
    assertThat(rejects).isEqualTo(3);

    URI rest = flink.getRestAddress().get();
    JsonNode job = get(rest, "/jobs/" + result.getJobID());
    List<String> seen = new ArrayList<>();
    long distributeSent = -1;
    long writerReceived = -1;
    for (JsonNode v : job.path("vertices")) {
      String name = v.path("name").asText();
      long in = v.path("metrics").path("read-records").asLong();
      long out = v.path("metrics").path("write-records").asLong();
      seen.add(name + ": in " + in + ", out " + out);
      if (name.contains("distribute")) {
        distributeSent = out;
      }
      if (name.contains(SpatialIngestJob.SINK_UID) && name.contains("Writer")) {
        writerReceived = in;
      }
    }
    assertThat(distributeSent)
        .as("Records Sent of the distribute vertex = the committed rows; vertices %s", seen)
        .isEqualTo(rows + rejects);
    assertThat(writerReceived)
        .as("Records Received of the sink writer = the committed rows; vertices %s", seen)
        .isEqualTo(rows + rejects);
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
