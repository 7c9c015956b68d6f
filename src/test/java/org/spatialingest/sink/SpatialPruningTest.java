package org.spatialingest.sink;

import static org.apache.iceberg.expressions.Expressions.and;
import static org.apache.iceberg.expressions.Expressions.greaterThanOrEqual;
import static org.apache.iceberg.expressions.Expressions.lessThanOrEqual;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.ParquetMetricsRowGroupFilter;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.io.LocalInputFile;
import org.apache.iceberg.shaded.org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * Hilbert-sorted files give tight row-group bbox statistics: a small bbox query reads few row
 * groups.
 */
class SpatialPruningTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  @RegisterExtension static final KafkaBroker kafka = new KafkaBroker();

  @Test
  void aSmallBboxFilterReadsFarFewerRowGroups(@TempDir Path dir) throws Exception {
    String topic = "pruning";
    kafka.createTopic(topic, 2);
    Random random = new Random(5);
    List<byte[]> values = new ArrayList<>();
    int inBox = 0;
    for (int i = 0; i < 40_000; i++) {
      double lon = -180 + random.nextDouble() * 360;
      double lat = -85 + random.nextDouble() * 170;
      if (lon >= 0 && lon <= 10 && lat >= 40 && lat <= 50) {
        inBox++;
      }
      values.add(
          String.format(
                  Locale.ROOT,
                  "{\"id\":\"p%d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\","
                      + "\"coordinates\":[%.6f,%.6f]}}",
                  i,
                  System.currentTimeMillis(),
                  lon,
                  lat)
              .getBytes(StandardCharsets.UTF_8));
    }
    TestKit.produceValues(kafka.bootstrapServers(), topic, values);
    JobConfig config =
        TestKit.config(
            kafka.bootstrapServers(),
            topic,
            dir,
            // many small row groups (T / n = 32 KiB), through the job's own key
            Map.of(
                "sink.max-latency",
                "1h",
                "sink.target-file-size",
                "4MiB",
                "sink.row-groups-per-file",
                "128"));

    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    SpatialIngestJob.build(env, config, true);
    env.execute("pruning");

    Table table = TestKit.table(config);
    Expression box =
        and(
            and(lessThanOrEqual("bbox.xmin", 10.0), greaterThanOrEqual("bbox.xmax", 0.0)),
            and(lessThanOrEqual("bbox.ymin", 50.0), greaterThanOrEqual("bbox.ymax", 40.0)));
    int rowGroups = 0;
    int rowGroupsRead = 0;
    ParquetMetricsRowGroupFilter filter =
        new ParquetMetricsRowGroupFilter(table.schema(), box, true);
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        Path file = Path.of(java.net.URI.create(task.file().location()));
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file))) {
          MessageType schema = reader.getFooter().getFileMetaData().getSchema();
          for (BlockMetaData rowGroup : reader.getFooter().getBlocks()) {
            rowGroups++;
            if (filter.shouldRead(schema, rowGroup)) {
              rowGroupsRead++;
            }
          }
        }
      }
    }
    int found = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).where(box).build()) {
      for (Record r : rows) {
        double x = (Double) ((Record) r.getField("bbox")).getField("xmin");
        double y = (Double) ((Record) r.getField("bbox")).getField("ymin");
        if (x >= 0 && x <= 10 && y >= 40 && y <= 50) {
          found++;
        }
      }
    }
    System.out.printf(
        "pruning: %d of %d row groups read for a box holding %d of %d points%n",
        rowGroupsRead, rowGroups, inBox, values.size());
    assertThat(found).as("the filtered scan still finds every point in the box").isEqualTo(inBox);
    assertThat(rowGroups).isGreaterThanOrEqualTo(20);
    // the box covers 0.16% of the area; a Hilbert-sorted file keeps its row groups spatially
    // compact
    assertThat(rowGroupsRead * 10)
        .as("%d of %d row groups read", rowGroupsRead, rowGroups)
        .isLessThanOrEqualTo(rowGroups);
  }
}
