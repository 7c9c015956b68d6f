package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * A start whose tasks take seconds to come up refuses only the triggers around its ends, not one
 * per interval: one source reader opens {@value #READER_DELAY_MS} ms late (its task is INITIALIZING
 * meanwhile, as a slow table load or a slow machine makes it), the checkpoint interval is 1 s, and
 * the job's own checkpoint configuration ({@link SpatialIngestJob#configureCheckpointing}) with
 * {@link StartingBacklogSource} holds the triggers back until every reader has registered. Asserted
 * on the REST API's counts once checkpoints complete: {@code failed} ≤ {@value #REFUSALS_ALLOWED},
 * what {@link StartingBacklogSource} promises (Flink's first trigger, which it cannot hold back,
 * and one more when the JobManager sees a task RUNNING later than C after its reader registered,
 * which a loaded CI machine showed at C = 500 ms and at 1 s). Without the backlog signal the same
 * start counts a refused trigger per interval of the delay.
 */
class StartingBacklogTest {
  /** Long against C: without the signal it costs a refusal per second of it. */
  private static final long READER_DELAY_MS = 8_000;

  private static final int REFUSALS_ALLOWED = 2;
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  @Test
  void aSlowStartRefusesAtMostTheFirstTrigger(
      @TempDir Path dir, @InjectMiniCluster MiniCluster flink) throws Exception {
    JobConfig config =
        JobConfig.fromMap(
            Map.of(
                "source",
                "file:" + dir,
                "catalog.warehouse",
                dir.resolve("warehouse").toString(),
                "checkpoint.interval",
                "1s")); // the demo's C
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.configureCheckpointing(env, config);
    DataGeneratorSource<Long> numbers =
        new DataGeneratorSource<>(
            i -> i, Long.MAX_VALUE, RateLimiterStrategy.perSecond(20), Types.LONG);
    env.fromSource(
            StartingBacklogSource.of(new LateReaderSource<>(numbers)),
            WatermarkStrategy.noWatermarks(),
            "numbers")
        .sinkTo(new DiscardingSink<>());
    JobClient job = env.executeAsync("starting-backlog");
    try {
      URI checkpoints =
          flink.getRestAddress().get().resolve("/jobs/" + job.getJobID() + "/checkpoints");
      JsonNode counts = counts(checkpoints);
      long deadline = System.currentTimeMillis() + 120_000;
      while (counts.path("completed").asLong() < 3 && System.currentTimeMillis() < deadline) {
        Thread.sleep(200);
        counts = counts(checkpoints);
      }
      assertThat(counts.path("completed").asLong()).as("%s", counts).isGreaterThanOrEqualTo(3);
      assertThat(counts.path("failed").asLong())
          .as(
              "REST failed count (refused triggers included) after a start %s ms slow: %s",
              READER_DELAY_MS, counts)
          .isLessThanOrEqualTo(REFUSALS_ALLOWED);
    } finally {
      TestKit.cancelAndWait(job);
    }
  }

  private static JsonNode counts(URI checkpoints) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(checkpoints).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    // 500 while the JobManager is still initialising the job: nothing counted yet
    return response.statusCode() == 200
        ? JSON.readTree(response.body()).path("counts")
        : JSON.createObjectNode();
  }

  /** The delegate, whose reader of subtask 1 opens {@link #READER_DELAY_MS} late. */
  private static final class LateReaderSource<T, SplitT extends SourceSplit, EnumT>
      extends ForwardingSource<T, SplitT, EnumT> {
    LateReaderSource(Source<T, SplitT, EnumT> delegate) {
      super(delegate);
    }

    @Override
    public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
      if (context.getIndexOfSubtask() == 1) {
        Thread.sleep(READER_DELAY_MS); // the task stays INITIALIZING, as on a slow start
      }
      return delegate.createReader(context);
    }
  }
}
