package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.JobConfig;
import org.spatialingest.sink.MixedInput;

/**
 * A backfill's share per checkpoint ({@code source.file.max-files-per-checkpoint}, {@code
 * -bytes-per-checkpoint}) on a real MiniCluster into a Hadoop-catalog table: the files first read
 * between two checkpoint barriers stay within two shares (a share ends when a checkpoint completes,
 * which lies between two barriers), so the files spread over several checkpoints, where without a
 * cap they are all read in the first; a single file larger than the byte cap still goes through;
 * every record is committed once. The keys are refused with a Kafka source, naming them.
 */
class CheckpointShareTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  /** Per barrier interval of the one counting subtask: the files whose first line it saw. */
  static final List<Integer> NEW_FILES_PER_INTERVAL = new ArrayList<>();

  @Test
  void aBackfillIsReadInSharesOfFilesPerCheckpoint(@TempDir Path dir) throws Exception {
    MixedInput all = files(dir, 12, 40);
    run(config(dir, Map.of("source.file.max-files-per-checkpoint", "2")));
    all.assertExactlyOnceIn(config(dir, Map.of()));
    List<Integer> intervals = List.copyOf(NEW_FILES_PER_INTERVAL);
    assertThat(intervals.stream().mapToInt(Integer::intValue).sum()).isEqualTo(12);
    assertThat(intervals).as("files first read per barrier interval").allMatch(n -> n <= 4);
    assertThat(intervals.stream().filter(n -> n > 0).count())
        .as("intervals that read new files")
        .isGreaterThanOrEqualTo(3);
  }

  @Test
  void theByteShareIsSoftAFileLargerThanItGoesThrough(@TempDir Path dir) throws Exception {
    MixedInput all = files(dir, 6, 200);
    long oneFile = Files.size(dir.resolve("in").resolve("part-00.ndjson"));
    run(config(dir, Map.of("source.file.max-bytes-per-checkpoint", Long.toString(oneFile / 2))));
    all.assertExactlyOnceIn(config(dir, Map.of()));
    assertThat(NEW_FILES_PER_INTERVAL)
        .as("one file per share: each is larger than the cap")
        .allMatch(n -> n <= 2);
  }

  @Test
  void theSharesAreRefusedWithAKafkaSource(@TempDir Path dir) {
    assertThatThrownBy(
            () ->
                TestKit.config(
                    "localhost:1",
                    "t",
                    dir.resolve("warehouse"),
                    Map.of("source.file.max-files-per-checkpoint", "10")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("source.file.max-files-per-checkpoint")
        .hasMessageContaining("file source");
  }

  private static MixedInput files(Path dir, int count, int lines) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    MixedInput all = MixedInput.of("none", 0, 0, 0);
    for (int f = 0; f < count; f++) {
      MixedInput input = MixedInput.of(String.format("f%02d-", f), lines, 7, 0);
      StringBuilder text = new StringBuilder();
      input
          .values()
          .forEach(
              v ->
                  text.append(new String(v, java.nio.charset.StandardCharsets.UTF_8)).append('\n'));
      Files.writeString(in.resolve(String.format("part-%02d.ndjson", f)), text);
      all = all.plus(input);
    }
    return all;
  }

  private static JobConfig config(Path dir, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("source", "file:" + dir.resolve("in"));
    m.put("sink.max-latency", "1s");
    m.put("checkpoint.interval", "300ms");
    return TestKit.config("localhost:1", "unused", dir.resolve("warehouse"), m);
  }

  private static void run(JobConfig config) throws Exception {
    NEW_FILES_PER_INTERVAL.clear();
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    SpatialIngestJob.configureCheckpointing(env, config);
    var records =
        SpatialIngestJob.source(env, config, true, SpatialIngestJob.decideStart(env, config))
            .map(new FirstLines())
            .name("first-lines");
    SpatialIngestJob.sink(SpatialIngestJob.transform(records, config), config);
    env.execute("checkpoint-shares");
  }

  /** Counts, per barrier interval, the files whose first line passes (parallelism 1). */
  static final class FirstLines extends RichMapFunction<SourceRecord, SourceRecord>
      implements CheckpointedFunction {
    private final Set<String> seen = new HashSet<>();
    private int newFiles;

    @Override
    public SourceRecord map(SourceRecord r) {
      if (r.line == 1 && seen.add(r.file)) {
        newFiles++;
      }
      return r;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
      synchronized (NEW_FILES_PER_INTERVAL) {
        NEW_FILES_PER_INTERVAL.add(newFiles);
      }
      newFiles = 0;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {}

    @Override
    public void close() {
      synchronized (NEW_FILES_PER_INTERVAL) {
        NEW_FILES_PER_INTERVAL.add(newFiles); // after the last barrier
      }
    }
  }
}
