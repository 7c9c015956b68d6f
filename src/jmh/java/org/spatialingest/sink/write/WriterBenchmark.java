package org.spatialingest.sink.write;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.HilbertCurve;
import org.spatialingest.geometry.TelemetryParser;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TelemetryTable;

/**
 * The file writer alone, one thread, the same Hilbert-sorted point rows: the sink's {@link
 * SortedFileWriter} (one file from a {@link PartitionBuffer}, as a writer closes it: the sort, the
 * GeoParquet footer pass, the table's properties over the sink's writer defaults; with its {@link
 * BinaryRowValueWriter}, and with Iceberg's generic Flink row writer instead) against Iceberg's own
 * Flink writer as {@code IcebergSink} runs it ({@link RowDataTaskWriterFactory} with the table's
 * properties, rows handed over one {@link RowData} each, as they arrive from the exchange), both
 * writing one file of all the rows into a real Hadoop-catalog table's location. The rows are
 * clustered points (20 centres, σ ≈ 0.05°) of one day, made by the job's own transform.
 *
 * <p>Run: {@code mvn -B -o -llr -Pjmh test-compile exec:exec
 * -Djmh.args="org.spatialingest.sink.write.WriterBenchmark"}; the side-by-side CPU ratio in
 * interleaved rounds is {@link WriterCpuRatio}'s. Not part of {@code mvn verify}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx4g", "-XX:+UseParallelGC"})
public class WriterBenchmark {
  @Param({"100000"})
  public int rows;

  private Path dir;
  private Table table;
  private PartitionBuffer buffer;
  private SortedFileWriter ours;
  private SortedFileWriter oursGeneric;
  private List<RowData> sorted;
  private RowDataTaskWriterFactory iceberg;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("writer-benchmark");
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), dir.toString());
    table =
        TableBootstrap.ensureTable(
            catalog,
            TableIdentifier.of("bench", "telemetry"),
            TelemetryTable.LAYOUT,
            JobConfig.TimePartitioning.DAY);
    PartitionBuffers buffers = new PartitionBuffers(table, TelemetryTable.LAYOUT);
    BufferedRowSize rowSize = new BufferedRowSize(new RowDataSerializer(TelemetryTable.ROW_TYPE));
    for (RowData row : clusteredPoints(rows)) {
      buffers.add(row, rowSize.serialize(row));
    }
    if (buffers.size() != 1) {
      throw new IllegalStateException("rows of one partition expected, got " + buffers.size());
    }
    buffer = buffers.all().iterator().next();
    ours = new SortedFileWriter(table, TelemetryTable.LAYOUT, newFiles());
    oursGeneric = ours.withGenericRows();
    // the same rows in the same (sorted) order, one object each, as Iceberg's writer receives them
    sorted = new ArrayList<>(buffer.size());
    for (int i : buffer.sortedOrder()) {
      BinaryRowData row = new BinaryRowData(TelemetryTable.LAYOUT.fieldCount());
      buffer.pointTo(i, row);
      sorted.add(row.copy());
    }
    iceberg =
        new RowDataTaskWriterFactory(
            table,
            TelemetryTable.ROW_TYPE,
            Long.MAX_VALUE, // one file, as ours
            FileFormat.PARQUET,
            table.properties(),
            null,
            false);
    iceberg.initialize(0, 0);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private OutputFileFactory newFiles() {
    return OutputFileFactory.builderFor(table, 0, 0)
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
  }

  /** The sink's writer: one sorted file from the buffer. */
  @Benchmark
  public long ours() throws IOException {
    DataFile file = ours.write(buffer);
    table.io().deleteFile(file.location());
    return file.fileSizeInBytes();
  }

  /**
   * The sink's writer with Iceberg's generic Flink row writer instead of {@link
   * BinaryRowValueWriter}: what the binary rows take out.
   */
  @Benchmark
  public long oursGenericRows() throws IOException {
    DataFile file = oursGeneric.write(buffer);
    table.io().deleteFile(file.location());
    return file.fileSizeInBytes();
  }

  /** Iceberg's Flink writer, as {@code IcebergSink}'s writer runs it: the same rows, one file. */
  @Benchmark
  public long iceberg() throws IOException {
    TaskWriter<RowData> writer = iceberg.create();
    for (RowData row : sorted) {
      writer.write(row);
    }
    WriteResult result = writer.complete();
    long bytes = 0;
    for (DataFile file : result.dataFiles()) {
      bytes += file.fileSizeInBytes();
      table.io().deleteFile(file.location());
    }
    if (result.dataFiles().length != 1) {
      throw new IllegalStateException("one file expected, got " + result.dataFiles().length);
    }
    return bytes;
  }

  /** Bytes of the two files, for the report (each written once more). */
  long[] fileBytes() throws IOException {
    return new long[] {ours(), oursGenericRows(), iceberg()};
  }

  /**
   * {@code count} point rows of one day through the job's transform (default keys): 20 clusters of
   * σ ≈ 0.05° around fixed centres, a few properties, source columns set as the transform sets
   * them.
   */
  static List<RowData> clusteredPoints(int count) {
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84, JobConfig.fromMap(Map.of()));
    Random random = new Random(58);
    double[][] centres = new double[20][];
    for (int c = 0; c < centres.length; c++) {
      centres[c] = new double[] {random.nextDouble() * 300 - 150, random.nextDouble() * 120 - 60};
    }
    long day = 1_796_083_200_000L; // 2026-12-01T00:00:00Z
    List<RowData> rows = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      double[] centre = centres[random.nextInt(centres.length)];
      String json =
          String.format(
              Locale.ROOT,
              "{\"id\":\"p-%d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\",\"coordinates\":"
                  + "[%.6f,%.6f]},\"properties\":{\"vehicle\":\"v%d\",\"speed_kmh\":%.1f}}",
              i,
              day + (long) i * 80_000_000L / count,
              centre[0] + random.nextGaussian() * 0.05,
              centre[1] + random.nextGaussian() * 0.05,
              random.nextInt(500),
              random.nextDouble() * 120);
      try {
        GenericRowData row = parser.parse(json.getBytes(StandardCharsets.UTF_8), day + i).row();
        row.setField(TelemetryTable.SOURCE, StringData.fromString("telemetry-0"));
        row.setField(TelemetryTable.SOURCE_OFFSET, (long) i);
        rows.add(row);
      } catch (Exception e) {
        throw new IllegalStateException(json, e);
      }
    }
    return rows;
  }
}
