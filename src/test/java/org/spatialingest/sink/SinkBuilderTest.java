package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.TelemetryTransform;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.distribution.TableFiles;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TelemetryTable;

/**
 * The sink's public builder alone makes a correct job (issue #35): rows of a bounded input,
 * transformed, then {@code BoundedIcebergSink.forRows(...)...append(rows)}, nothing of {@code
 * SpatialIngestJob}. The builder puts in the range exchange with the writer count it places rows
 * on, turns off the unaligned checkpoints the environment asked for, and every row is committed
 * once, each writer's file a compact run of Hilbert keys.
 */
class SinkBuilderTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  private static final int ROWS = 6_000;
  private static final int WRITERS = 4;

  @Test
  void theBuilderAloneAssemblesADistributedExactlyOnceJob(@TempDir Path dir) throws Exception {
    JobConfig config =
        TestKit.config(
            "localhost:1",
            "unused",
            dir,
            Map.of(
                "sink.max-latency", "1h",
                "sink.target-file-size", "4MB",
                "sink.memory-budget", "64MB"));
    TestKit.newTable(config);
    List<SourceRecord> input = new ArrayList<>();
    Set<String> sent = new HashSet<>();
    TelemetryGenerator generator = new TelemetryGenerator(5, 20, 0, 0);
    for (int i = 1; i <= ROWS; i++) {
      TelemetryGenerator.Record r = generator.next(1_700_000_000_000L + i);
      sent.add(r.id());
      // read now, as the file source stamps its records: the ingest time L is measured from
      SourceRecord record =
          SourceRecord.fromFile(r.json(), "builder-input", i, System.currentTimeMillis());
      record.source = SourceKeys.file(record.file);
      input.add(record);
    }

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    env.enableCheckpointing(300);
    env.getCheckpointConfig().enableUnalignedCheckpoints(true);
    DataStream<RowData> rows =
        env.fromData(input)
            .process(new TelemetryTransform(HilbertCurve.CRS84, config))
            .returns(InternalTypeInfo.of(TelemetryTable.layout(config).rowType()));
    BoundedIcebergSink.forRows(TableRouter.single())
        .table(Catalogs.tableLoader(config), TelemetryTable.layout(config))
        .closePolicy(config.closePolicy(), config.sizingBounds())
        .sinkId("builder-test", true)
        .writers(WRITERS)
        .append(rows);

    assertThat(env.getCheckpointConfig().isUnalignedCheckpointsEnabled())
        .as("the sink's positions need aligned checkpoints")
        .isFalse();
    StreamGraph graph = env.getStreamGraph(false);
    assertThat(graph.getStreamNodes())
        .as("the range exchange in front of the writers, with the input's parallelism")
        .anySatisfy(
            n -> {
              assertThat(n.getOperatorName()).startsWith("distribute (range)");
              assertThat(n.getParallelism()).isEqualTo(2);
            });
    assertThat(
            graph.getStreamNodes().stream()
                .filter(n -> n.getOperatorName().contains("Writer"))
                .map(StreamNode::getParallelism))
        .as("the writers: as many as the exchange places rows on")
        .containsExactly(WRITERS);
    env.execute("sink-builder");

    Table table = TestKit.table(config);
    assertThat(TestKit.distinctIds(TestKit.rows(table))).isEqualTo(sent);
    List<DataFile> files = TableFiles.files(table);
    assertThat(files).as("one file per writer at end of input").hasSizeBetween(2, WRITERS);
    assertThat(closedAtEndOfInput(table))
        .as("at L = 1 h and T = 4 MB only the end of input closes a file")
        .isEqualTo(files.size());
    assertThat(TableFiles.summedSpans(files))
        .as("each file a compact run of Hilbert keys: sum of key spans / total span")
        .isLessThanOrEqualTo(1.25);
  }

  private static long closedAtEndOfInput(Table table) {
    long n = 0;
    for (Snapshot s : table.snapshots()) {
      n +=
          Long.parseLong(
              s.summary()
                  .getOrDefault(
                      SnapshotSummaryKeys.CLOSED_PREFIX + CloseReason.END_OF_INPUT.code(), "0"));
    }
    return n;
  }
}
