package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.iceberg.shaded.org.apache.parquet.io.LocalInputFile;
import org.apache.iceberg.shaded.org.apache.parquet.schema.GroupType;
import org.apache.iceberg.shaded.org.apache.parquet.schema.MessageType;
import org.apache.iceberg.shaded.org.apache.parquet.schema.PrimitiveType;
import org.apache.iceberg.shaded.org.apache.parquet.schema.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.io.WKBReader;
import org.spatialingest.JobStart;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.cli.CliRun;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.GeoParquetMetadata;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TelemetryTable;

/**
 * Every telemetry data file the sink writes is a GeoParquet 1.1 file: its {@code geo} footer
 * validates against the spec's JSON schema, names the geometry types and the bbox of exactly its
 * rows, and points its bbox covering at a struct column shaped as the spec requires. Rejects files
 * stay plain. A table of an earlier build (flat bbox columns) is migrated in place and keeps its
 * old rows readable.
 */
class GeoParquetFilesTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(2);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Schema GEOPARQUET_1_1 = loadSchema();

  private static Schema loadSchema() {
    try (InputStream in =
        GeoParquetFilesTest.class.getResourceAsStream("/geoparquet/1.1.0/schema.json")) {
      return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_7).getSchema(in);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static List<String> validate(JsonNode geo) {
    List<String> problems = new ArrayList<>();
    for (Error e : GEOPARQUET_1_1.validate(geo)) {
      problems.add(e.toString());
    }
    return problems;
  }

  @Test
  void theSchemaCheckCatchesWhatTheSpecForbids() throws Exception {
    ObjectNode good =
        (ObjectNode)
            JSON.readTree(
                """
        {"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB",
        "geometry_types":["Point"],"bbox":[0,0,1,1],"covering":{"bbox":{"xmin":["bbox","xmin"],
        "ymin":["bbox","ymin"],"xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}""");
    assertThat(validate(good)).isEmpty();
    ObjectNode flatCovering = good.deepCopy();
    ((ObjectNode) flatCovering.at("/columns/geometry/covering/bbox"))
        .set("xmin", JSON.createArrayNode().add("xmin"));
    assertThat(validate(flatCovering)).as("a covering naming a top-level column").isNotEmpty();
    ObjectNode badType = good.deepCopy();
    ((ArrayNode) badType.at("/columns/geometry/geometry_types")).add("LinearRing");
    assertThat(validate(badType)).isNotEmpty();
    ObjectNode oldVersion = good.deepCopy();
    oldVersion.put("version", "1.0.0");
    assertThat(validate(oldVersion)).isNotEmpty();
  }

  @Test
  void everyTelemetryFileIsGeoParquetWithItsOwnTypesAndBbox(@TempDir Path tmp) throws Exception {
    JobConfig config = run(tmp, input(tmp, 0));
    Table table = TestKit.table(config);
    int files = checkTelemetryFiles(table);
    assertThat(files).as("two event days: at least two files").isGreaterThanOrEqualTo(2);
    assertThat(TestKit.rows(table)).hasSize(GOOD_LINES);

    Table rejects = rejectsTable(config);
    int rejectFiles = 0;
    for (DataFile file : dataFiles(rejects)) {
      assertThat(footer(file))
          .as("rejects files stay plain")
          .doesNotContainKey(GeoParquetMetadata.KEY);
      rejectFiles++;
    }
    assertThat(rejectFiles).isPositive();
  }

  @Test
  void telemetryFilesAreWrittenWithoutDictionaries(@TempDir Path tmp) throws Exception {
    JobConfig config = run(tmp, input(tmp, 0));
    List<DataFile> files = dataFiles(TestKit.table(config));
    assertThat(files).isNotEmpty();
    for (DataFile file : files) {
      try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(localPath(file)))) {
        for (var block : reader.getFooter().getBlocks()) {
          for (var column : block.getColumns()) {
            assertThat(column.hasDictionaryPage())
                .as("%s of %s: no dictionary page", column.getPath(), file.location())
                .isFalse();
          }
        }
      }
    }
  }

  @Test
  void aTablePropertyOverridesTheWriterDefaults() {
    assertThat(SortedFileWriter.writerProperties(Map.of()))
        .containsEntry("parquet.enable.dictionary", "false");
    assertThat(SortedFileWriter.writerProperties(Map.of("parquet.enable.dictionary", "true")))
        .containsEntry("parquet.enable.dictionary", "true");
    // row groups of T / sink.row-groups-per-file, unless the table sets its own
    assertThat(SortedFileWriter.writerProperties(Map.of(), 16_000_000))
        .containsEntry("write.parquet.row-group-size-bytes", "16000000");
    assertThat(
            SortedFileWriter.writerProperties(
                Map.of("write.parquet.row-group-size-bytes", "1000"), 16_000_000))
        .containsEntry("write.parquet.row-group-size-bytes", "1000");
    assertThat(SortedFileWriter.writerProperties(Map.of(), 0))
        .doesNotContainKey("write.parquet.row-group-size-bytes");
  }

  @Test
  void aTableOfAnEarlierBuildIsMigratedAndKeepsItsOldRows(@TempDir Path tmp) throws Exception {
    JobConfig config = config(tmp, Files.createDirectories(tmp.resolve("input")));
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    Table legacy =
        catalog
            .buildTable(Catalogs.tableIdentifier(config), LEGACY_SCHEMA)
            .withPartitionSpec(
                org.apache.iceberg.PartitionSpec.builderFor(LEGACY_SCHEMA)
                    .day("event_time")
                    .build())
            .withProperty("format-version", "2")
            .create();
    appendLegacyRow(legacy);

    input(tmp, 0);
    run(tmp, tmp.resolve("input"), config);

    Table table = TestKit.table(config);
    Types.NestedField bbox = table.schema().findField("bbox");
    assertThat(bbox).isNotNull();
    assertThat(bbox.type().isStructType()).isTrue();
    assertThat(table.schema().findField("xmin").isOptional())
        .as("old column kept, optional")
        .isTrue();
    List<Record> rows = TestKit.rows(table);
    assertThat(rows).hasSize(GOOD_LINES + 1);
    Record old =
        rows.stream().filter(r -> "legacy-1".equals(r.getField("id"))).findFirst().orElseThrow();
    assertThat(old.getField("xmin")).isEqualTo(7.0);
    assertThat(old.getField("bbox")).isNull();
    for (Record r : rows) {
      if (r != old) {
        assertThat(r.getField("bbox")).as("new rows have the struct").isNotNull();
        assertThat(r.getField("xmin")).isNull();
      }
    }
    // files written after the migration are GeoParquet too (the legacy file is not and is skipped)
    assertThat(checkTelemetryFiles(table)).isGreaterThanOrEqualTo(2);
    // a bbox filter on the struct still finds the new rows (their files have the struct's metrics)
    try (CloseableIterable<Record> found =
        IcebergGenerics.read(table)
            .where(
                Expressions.and(
                    Expressions.lessThanOrEqual("bbox.xmin", 180.0),
                    Expressions.greaterThanOrEqual("bbox.xmax", -180.0)))
            .build()) {
      int n = 0;
      for (Record r : found) {
        if (r.getField("bbox") != null) {
          n++;
        }
      }
      assertThat(n).isEqualTo(GOOD_LINES);
    }
    // verify and inspect read the table with old and new files
    String warehouse = "catalog.warehouse=" + tmp.resolve("warehouse");
    CliRun inspect = CliRun.of("inspect", "--set", warehouse, "--json");
    assertThat(inspect.exitCode()).as(inspect.err()).isZero();
    assertThat(JSON.readTree(inspect.out()).get("rows").asLong()).isEqualTo(GOOD_LINES + 1);
    CliRun verify = CliRun.of("verify", "--set", warehouse, "--expected-mb", "0.01", "--json");
    assertThat(verify.exitCode()).as(verify.err()).isIn(0, 1); // read: within tolerance or not
    assertThat(JSON.readTree(verify.out()).isObject()).as(verify.out()).isTrue();
    // a second start finds the migrated table as it left it
    TableBootstrap.ensureTable(
        catalog,
        Catalogs.tableIdentifier(config),
        TelemetryTable.layout(config),
        config.partitioning());
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Lines per input file, and which of them are good. */
  private static final int LINES = 900;

  private static final int GOOD_LINES = LINES - LINES / 100;

  /**
   * One file of WKT lines in CRS84: points, line strings, polygons and multipolygons on two event
   * days, one bad line in a hundred (a rejects file).
   */
  private static Path input(Path tmp, int n) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("input"));
    StringBuilder sb = new StringBuilder();
    for (int i = 1; i <= LINES; i++) {
      String day = i % 2 == 0 ? "2026-11-28" : "2026-11-29";
      if (i % 100 == 50) {
        sb.append("{\"id\":\"bad")
            .append(i)
            .append("\",\"event_time\":\"")
            .append(day)
            .append("T10:00:00Z\",")
            .append("\"geometry\":\"POINT(1\"}\n");
        continue;
      }
      double x = -170 + (i * 7.3) % 340;
      double y = -80 + (i * 3.1) % 160;
      String wkt =
          switch (i % 4) {
            case 0 -> String.format(Locale.ROOT, "POINT(%.4f %.4f)", x, y);
            case 1 ->
                String.format(
                    Locale.ROOT, "LINESTRING(%.4f %.4f, %.4f %.4f)", x, y, x + 1.5, y + 0.5);
            case 2 ->
                String.format(
                    Locale.ROOT,
                    "POLYGON((%1$.4f %2$.4f, %3$.4f %2$.4f, %3$.4f %4$.4f, %1$.4f %2$.4f))",
                    x,
                    y,
                    x + 2,
                    y + 1);
            default ->
                String.format(
                    Locale.ROOT,
                    "MULTIPOLYGON(((%1$.4f %2$.4f, %3$.4f %2$.4f, %3$.4f %4$.4f, %1$.4f %2$.4f)))",
                    x,
                    y,
                    x + 0.5,
                    y + 0.5);
          };
      sb.append(
          String.format(
              Locale.ROOT,
              "{\"id\":\"g%d-%d\",\"event_time\":\"%sT10:00:00Z\",\"geometry\":\"%s\"}%n",
              n,
              i,
              day,
              wkt));
    }
    Files.writeString(dir.resolve("part-" + n + ".ndjson"), sb.toString(), StandardCharsets.UTF_8);
    return dir;
  }

  private static JobConfig config(Path tmp, Path input) {
    return JobConfig.fromMap(
        Map.of(
            "source", "file:" + input,
            "input.format", "wkt",
            "catalog.warehouse", tmp.resolve("warehouse").toString(),
            "checkpoint.interval", "200ms",
            "sink.max-latency", "1s"));
  }

  private static JobConfig run(Path tmp, Path input) throws Exception {
    JobConfig config = config(tmp, input);
    run(tmp, input, config);
    return config;
  }

  private static void run(Path tmp, Path input, JobConfig config) throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    SpatialIngestJob.configureCheckpointing(env, config);
    JobStart start = SpatialIngestJob.decideStart(env, config);
    SpatialIngestJob.sink(
        SpatialIngestJob.transformWithRejects(
            SpatialIngestJob.source(env, config, true, start), config),
        config,
        start);
    env.execute("geoparquet");
  }

  /**
   * Checks each GeoParquet data file of {@code table} (files without a {@code geo} key must be from
   * before the migration: they hold no {@code bbox}); returns how many were checked.
   */
  private static int checkTelemetryFiles(Table table) throws Exception {
    int checked = 0;
    for (DataFile file : dataFiles(table)) {
      Map<String, String> footer = footer(file);
      MessageType parquet = parquetSchema(file);
      if (!footer.containsKey(GeoParquetMetadata.KEY)) {
        assertThat(parquet.containsField("bbox"))
            .as("only a legacy file lacks geo: %s", file.location())
            .isFalse();
        continue;
      }
      JsonNode geo = JSON.readTree(footer.get(GeoParquetMetadata.KEY));
      assertThat(validate(geo)).as("geo of %s: %s", file.location(), geo).isEmpty();
      assertThat(geo.path("primary_column").asText()).isEqualTo("geometry");
      JsonNode column = geo.path("columns").path("geometry");
      assertThat(column.path("encoding").asText()).isEqualTo("WKB");
      assertThat(column.has("crs")).as("no crs key: OGC:CRS84 by the spec's default").isFalse();

      // the covering's column is a group of xmin, ymin, xmax, ymax doubles, as required as the
      // geometry
      for (String f : List.of("xmin", "ymin", "xmax", "ymax")) {
        assertThat(column.path("covering").path("bbox").path(f).toString())
            .isEqualTo("[\"bbox\",\"" + f + "\"]");
      }
      GroupType group = parquet.getType("bbox").asGroupType();
      assertThat(group.getFields().stream().map(Type::getName).toList())
          .containsExactly("xmin", "ymin", "xmax", "ymax");
      for (Type t : group.getFields()) {
        assertThat(t.asPrimitiveType().getPrimitiveTypeName())
            .isEqualTo(PrimitiveType.PrimitiveTypeName.DOUBLE);
      }
      assertThat(group.getRepetition()).isEqualTo(parquet.getType("geometry").getRepetition());

      // types and bbox: exactly those of the file's rows, from the WKB itself
      Set<String> types = new TreeSet<>();
      Envelope all = new Envelope();
      WKBReader wkb = new WKBReader();
      long rows = 0;
      try (CloseableIterable<Record> records = TestKit.fileRows(table, file)) {
        for (Record r : records) {
          ByteBuffer bytes = (ByteBuffer) r.getField("geometry");
          byte[] b = new byte[bytes.remaining()];
          bytes.duplicate().get(b);
          org.locationtech.jts.geom.Geometry g = wkb.read(b);
          types.add(g.getGeometryType());
          Envelope env = g.getEnvelopeInternal();
          Record box = (Record) r.getField("bbox");
          assertThat(
                  new double[] {
                    (Double) box.getField("xmin"),
                    (Double) box.getField("ymin"),
                    (Double) box.getField("xmax"),
                    (Double) box.getField("ymax")
                  })
              .containsExactly(env.getMinX(), env.getMinY(), env.getMaxX(), env.getMaxY());
          all.expandToInclude(env);
          rows++;
        }
      }
      assertThat(rows).isEqualTo(file.recordCount());
      List<String> declaredTypes = new ArrayList<>();
      column.path("geometry_types").forEach(t -> declaredTypes.add(t.asText()));
      assertThat(declaredTypes).containsExactlyInAnyOrderElementsOf(types);
      List<Double> bbox = new ArrayList<>();
      column.path("bbox").forEach(v -> bbox.add(v.asDouble()));
      assertThat(bbox).containsExactly(all.getMinX(), all.getMinY(), all.getMaxX(), all.getMaxY());
      checked++;
      System.out.printf(
          "geoparquet: %s rows=%d geo=%s%n", file.location().replaceAll(".*/", ""), rows, geo);
    }
    return checked;
  }

  private static List<DataFile> dataFiles(Table table) throws Exception {
    List<DataFile> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file()));
    }
    return files;
  }

  private static Map<String, String> footer(DataFile file) throws Exception {
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(localPath(file)))) {
      return reader.getFooter().getFileMetaData().getKeyValueMetaData();
    }
  }

  private static MessageType parquetSchema(DataFile file) throws Exception {
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(localPath(file)))) {
      return reader.getFooter().getFileMetaData().getSchema();
    }
  }

  private static Path localPath(DataFile file) {
    return Path.of(java.net.URI.create(file.location()));
  }

  private static Table rejectsTable(JobConfig config) {
    return Catalogs.catalogLoader(config)
        .loadCatalog()
        .loadTable(Catalogs.rejectsTableIdentifier(config));
  }

  /**
   * The telemetry schema of builds before the bbox struct: the bbox as four top-level required
   * doubles.
   */
  private static final org.apache.iceberg.Schema LEGACY_SCHEMA =
      new org.apache.iceberg.Schema(
          Types.NestedField.required(1, "id", Types.StringType.get()),
          Types.NestedField.required(2, "event_time", Types.TimestampType.withZone()),
          Types.NestedField.required(3, "ingest_time", Types.TimestampType.withZone()),
          Types.NestedField.required(4, "geometry", Types.BinaryType.get()),
          Types.NestedField.required(5, "geometry_type", Types.StringType.get()),
          Types.NestedField.required(6, "xmin", Types.DoubleType.get()),
          Types.NestedField.required(7, "ymin", Types.DoubleType.get()),
          Types.NestedField.required(8, "xmax", Types.DoubleType.get()),
          Types.NestedField.required(9, "ymax", Types.DoubleType.get()),
          Types.NestedField.required(10, "hilbert", Types.LongType.get()),
          Types.NestedField.optional(11, "properties", Types.StringType.get()),
          Types.NestedField.optional(12, "region", Types.StringType.get()),
          Types.NestedField.optional(13, "source", Types.StringType.get()),
          Types.NestedField.optional(14, "source_offset", Types.LongType.get()));

  private static void appendLegacyRow(Table table) throws Exception {
    GenericRecord r = GenericRecord.create(table.schema());
    r.setField("id", "legacy-1");
    java.time.OffsetDateTime t = java.time.OffsetDateTime.parse("2026-11-28T09:00:00Z");
    r.setField("event_time", t);
    r.setField("ingest_time", t);
    r.setField(
        "geometry",
        ByteBuffer.wrap(
            new org.locationtech.jts.io.WKBWriter()
                .write(
                    new org.locationtech.jts.geom.GeometryFactory()
                        .createPoint(new org.locationtech.jts.geom.Coordinate(7, 8)))));
    r.setField("geometry_type", "Point");
    r.setField("xmin", 7.0);
    r.setField("ymin", 8.0);
    r.setField("xmax", 7.0);
    r.setField("ymax", 8.0);
    r.setField("hilbert", 1L);
    org.apache.iceberg.PartitionKey key =
        new org.apache.iceberg.PartitionKey(table.spec(), table.schema());
    key.partition(
        new org.apache.iceberg.data.InternalRecordWrapper(table.schema().asStruct()).wrap(r));
    OutputFile out =
        table
            .io()
            .newOutputFile(
                table.locationProvider().newDataLocation(table.spec(), key, "legacy.parquet"));
    DataWriter<Record> writer =
        Parquet.writeData(out)
            .schema(table.schema())
            .createWriterFunc(GenericParquetWriter::create)
            .withSpec(table.spec())
            .withPartition(key)
            .overwrite()
            .build();
    try (writer) {
      writer.write(r);
    }
    table.newAppend().appendFile(writer.toDataFile()).commit();
  }
}
