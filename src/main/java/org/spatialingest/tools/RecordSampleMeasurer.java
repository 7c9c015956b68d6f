package org.spatialingest.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.Stream;
import org.apache.flink.table.data.GenericRowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.spatialingest.config.JobConfig;
import org.spatialingest.geometry.RawRecord;
import org.spatialingest.geometry.SampleParse;
import org.spatialingest.sink.write.BufferedRowSize;
import org.spatialingest.sink.write.SinkFiles;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TableLayout;
import org.spatialingest.table.TelemetryTable;

/**
 * Measures a sample of records the way the job with a given configuration processes them: each
 * record is parsed with that job's {@link TelemetryParser} ({@code input.*}, {@code transform.*},
 * {@code regions.*}); buffered bytes are what the sink's writer accounts for that job's table
 * layout (typed property columns included, {@link BufferedRowSize}); encoded bytes come from
 * writing the parsed rows through the sink's own file writer ({@link SinkFiles}) into a temporary
 * Iceberg table of that layout and partitioning (Hadoop catalog in a temporary directory, created
 * by {@link TableBootstrap}) and dividing the file bytes by the row count. Records that do not
 * parse are counted per reject reason, never silently dropped. Region enrichment is a later
 * operator: sampled rows have no region.
 */
public final class RecordSampleMeasurer {
  /** {@code encodedBytesSource} when the encoded size was measured here. */
  public static final String ENCODED_MEASURED = "measured-parquet";

  private RecordSampleMeasurer() {}

  /**
   * The measurement.
   *
   * @param recordsRead records in the sample, parsed or not
   * @param parsed records that became rows (the ones measured)
   * @param rejectsByReason records that did not parse, by reject reason code
   * @param firstRejectByReason the first parse error message of each reason
   * @param bufferedBytes sum of the buffered bytes of the parsed rows
   * @param encodedBytesPerRecord Parquet bytes per row, empty when not measured
   * @param encodedFileBytes sum of the Parquet file sizes (0 when not measured)
   * @param encodedFiles Parquet files written: one per table partition the sample spans (0 when not
   *     measured)
   */
  public record Result(
      long recordsRead,
      long parsed,
      Map<String, Long> rejectsByReason,
      Map<String, String> firstRejectByReason,
      long bufferedBytes,
      OptionalDouble encodedBytesPerRecord,
      long encodedFileBytes,
      int encodedFiles) {

    public long rejected() {
      return recordsRead - parsed;
    }

    public double bufferedBytesPerRecord() {
      return parsed == 0 ? 0 : bufferedBytes / (double) parsed;
    }
  }

  /**
   * @param encode whether to write Parquet to measure the encoded size
   * @param job the job's configuration: how records parse, the table's layout and partitioning
   *     (files are written one per partition, as the sink does)
   */
  public static Result measure(List<RawRecord> records, boolean encode, JobConfig job)
      throws IOException {
    SampleParse.Parsed parsed = SampleParse.parse(records, job);
    List<GenericRowData> rows = parsed.rows();
    TableLayout layout = TelemetryTable.layout(job);
    BufferedRowSize rowSize = new BufferedRowSize(layout);
    long buffered = 0;
    for (GenericRowData row : rows) {
      buffered += rowSize.measure(row);
    }
    OptionalDouble encoded = OptionalDouble.empty();
    long fileBytes = 0;
    int files = 0;
    if (encode && !rows.isEmpty()) {
      SinkFiles.Written written = writeToTemporaryTable(rows, layout, job.partitioning());
      fileBytes = written.fileBytes();
      files = written.files().size();
      encoded = OptionalDouble.of(fileBytes / (double) written.rows());
    }
    return new Result(
        records.size(),
        rows.size(),
        parsed.rejectsByReason(),
        parsed.firstRejectByReason(),
        buffered,
        encoded,
        fileBytes,
        files);
  }

  private static SinkFiles.Written writeToTemporaryTable(
      List<GenericRowData> rows, TableLayout layout, JobConfig.TimePartitioning partitioning)
      throws IOException {
    Path warehouse = Files.createTempDirectory("spatial-ingest-plan-");
    try {
      JobConfig config =
          JobConfig.fromMap(
              Map.of(
                  "catalog.type", "hadoop",
                  "catalog.warehouse", warehouse.toString(),
                  "table.partitioning", partitioning.name().toLowerCase(Locale.ROOT)));
      Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
      try {
        Table table =
            TableBootstrap.ensureTable(
                catalog, Catalogs.tableIdentifier(config), layout, config.partitioning());
        return SinkFiles.write(table, layout, rows);
      } finally {
        if (catalog instanceof AutoCloseable closeable) {
          try {
            closeable.close();
          } catch (Exception ignored) {
            // temporary catalog
          }
        }
      }
    } finally {
      deleteRecursively(warehouse);
    }
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    } catch (IOException | UncheckedIOException e) {
      // best effort: a leftover temp dir is not worth failing the plan
    }
  }
}
