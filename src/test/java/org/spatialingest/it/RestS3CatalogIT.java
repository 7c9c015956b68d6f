package org.spatialingest.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.EmbeddedKafka;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.FileDeletes;
import org.spatialingest.table.Catalogs;

/**
 * The production catalog shape end to end on loopback: {@code catalog.type: rest} against the
 * Iceberg REST catalog test server, table data and metadata on {@code s3://} through {@code
 * S3FileIO} (iceberg-aws in the Iceberg runtime + the AWS SDK from iceberg-aws-bundle) talking to
 * an S3-compatible server. The job (MiniCluster, real KRaft broker) commits through the REST
 * catalog; the rows are read back through the REST catalog.
 *
 * <p>Credentials: made up per run. The job gets them the way production does, from the AWS default
 * credential chain (here the {@code aws.accessKeyId}/{@code aws.secretAccessKey} system properties,
 * in a pod the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY variables), never from the job
 * configuration.
 */
class RestS3CatalogIT {
  static final Path BUILD =
      Path.of(System.getProperty("spatialingest.build.dir", "target")).toAbsolutePath();

  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @Test
  void jobCommitsThroughRestCatalogToS3(@TempDir Path tmp) throws Exception {
    SecureRandom random = new SecureRandom();
    String accessKey = "IT" + HexFormat.of().withUpperCase().formatHex(random.generateSeed(8));
    String secretKey = HexFormat.of().formatHex(random.generateSeed(20));
    String bucket = "spatial-lake";
    String topic = "rest-s3";
    int n = 3_000;

    Map<String, String> saved = new HashMap<>();
    for (String key : List.of("aws.accessKeyId", "aws.secretAccessKey")) {
      saved.put(key, System.getProperty(key));
    }
    try (EmbeddedKafka kafka = EmbeddedKafka.start(tmp.resolve("kafka"));
        LoopbackLake lake =
            LoopbackLake.start(
                tmp.resolve("lake"), BUILD.resolve("it-lib"), bucket, accessKey, secretKey)) {
      System.setProperty("aws.accessKeyId", accessKey);
      System.setProperty("aws.secretAccessKey", secretKey);
      kafka.createTopic(topic, 2);
      Map<String, TelemetryGenerator.Record> sent =
          TestKit.produce(
              kafka.bootstrapServers(), topic, new TelemetryGenerator(5, 20, 300, 300), n);

      // the same keys as k8s/overlays/dev (REST catalog + S3FileIO on an S3-compatible endpoint)
      Map<String, String> job = new HashMap<>();
      job.put("kafka.bootstrap-servers", kafka.bootstrapServers());
      job.put("kafka.topic", topic);
      job.put("kafka.group-id", "rest-s3-it");
      job.put("kafka.starting-offsets", "earliest");
      job.put("catalog.type", "rest");
      job.put("catalog.name", "lake");
      job.put("catalog.uri", lake.restUri());
      job.put("catalog.warehouse", "s3://" + bucket + "/warehouse");
      job.put("catalog.properties.io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
      job.put("catalog.properties.s3.endpoint", lake.s3Endpoint());
      job.put("catalog.properties.s3.path-style-access", "true");
      job.put("catalog.properties.client.region", LoopbackLake.REGION);
      job.put("table.namespace", "spatial_it");
      job.put("table.name", "events");
      job.put("checkpoint.interval", "500ms");
      job.put("sink.max-latency", "1s");
      job.put("sink.memory-budget", "4MB");
      job.put("sink.target-file-size", "256KB");
      JobConfig config = JobConfig.fromMap(job);

      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      env.setParallelism(2);
      SpatialIngestJob.build(env, config, true);
      env.execute("rest-s3-it");

      // read back through the REST catalog (a fresh client)
      Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
      try {
        verifyReadBack(catalog, config, lake, bucket, n, sent.keySet());
        assertStagingRunsOfTheJobWereNotDeletedOneByOne(lake.requests(), lake);
        assertDeletesGoInBulk(catalog.loadTable(Catalogs.tableIdentifier(config)), lake);
      } finally {
        ((AutoCloseable) catalog).close(); // RESTCatalog; also closes its S3FileIO
      }

      for (String output : lake.outputs()) {
        assertThat(output)
            .as("server output must not contain the secret")
            .doesNotContain(secretKey);
      }
    } finally {
      saved.forEach(
          (k, v) -> {
            if (v == null) {
              System.clearProperty(k);
            } else {
              System.setProperty(k, v);
            }
          });
    }
  }

  /**
   * The job's staging runs (if its checkpoints came while rows waited) went in {@code
   * DeleteObjects} requests, never one {@code DELETE} a run, and none is left (issue #37).
   */
  private static void assertStagingRunsOfTheJobWereNotDeletedOneByOne(
      List<String> requests, LoopbackLake lake) throws Exception {
    long runsWritten = requests.stream().filter(r -> r.startsWith("PUT ") && isRun(r)).count();
    System.out.printf(
        "REST+S3: %d S3 requests, %d staging runs written%n", requests.size(), runsWritten);
    assertThat(requests).as("the S3 server's request log").isNotEmpty();
    assertThat(requests.stream().filter(r -> r.startsWith("DELETE ") && isRun(r)))
        .as("staging runs deleted one request each")
        .isEmpty();
    try (Stream<Path> left = Files.walk(lake.bucketDir())) {
      assertThat(left.filter(Files::isRegularFile).map(Path::toString))
          .as("staging runs left in the bucket")
          .noneMatch(p -> p.contains("_staging") && !p.endsWith("lease"));
    }
  }

  /**
   * What the committer does with a commit's staging runs ({@link FileDeletes}), through the table's
   * own {@code S3FileIO}: 120 runs go in one {@code DeleteObjects} request, not 120 requests.
   */
  private static void assertDeletesGoInBulk(Table table, LoopbackLake lake) throws Exception {
    List<String> runs = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      String path = table.location() + "/_staging/sinks/bulk-check/spatial-sink/run-" + i;
      try (var out = table.io().newOutputFile(path).createOrOverwrite()) {
        out.write(new byte[] {1});
      }
      runs.add(path);
    }
    int before = lake.requests().size();
    try (FileDeletes deletes = new FileDeletes()) {
      deletes.deleteLater(table.io(), runs);
    }
    List<String> requests = lake.requests();
    List<String> made = requests.subList(before, requests.size());
    System.out.printf("REST+S3: deleting 120 runs took %d S3 requests: %s%n", made.size(), made);
    assertThat(made).as("requests to delete 120 runs").hasSize(1);
    assertThat(made.get(0)).startsWith("POST ").contains("?delete");
    for (String path : runs) {
      assertThat(table.io().newInputFile(path).exists()).as(path).isFalse();
    }
  }

  /** A staging run's key (the sink's lease file sits beside them, and is not one). */
  private static boolean isRun(String request) {
    return request.contains("/_staging/") && !request.endsWith("/lease");
  }

  private static void verifyReadBack(
      Catalog catalog,
      JobConfig config,
      LoopbackLake lake,
      String bucket,
      int n,
      Set<String> sentIds)
      throws Exception {
    assertThat(catalog.getClass().getName()).isEqualTo("org.apache.iceberg.rest.RESTCatalog");
    assertThat(catalog.listTables(Namespace.of("spatial_it")))
        .contains(Catalogs.tableIdentifier(config));
    Table table = catalog.loadTable(Catalogs.tableIdentifier(config));
    assertThat(table.location()).startsWith("s3://" + bucket + "/warehouse/");
    assertThat(table.io().getClass().getName()).isEqualTo("org.apache.iceberg.aws.s3.S3FileIO");

    List<Record> rows = TestKit.rows(table);
    assertThat(rows).hasSize(n);
    Set<String> ids = new HashSet<>();
    rows.forEach(r -> ids.add((String) r.getField("id")));
    assertThat(ids).isEqualTo(sentIds);

    int dataFiles = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        assertThat(file.location())
            .startsWith("s3://" + bucket + "/warehouse/spatial_it/events/data/");
        // the object is really in the S3 server's store (its filesystem backend keeps keys as
        // paths)
        String key = file.location().substring(("s3://" + bucket + "/").length());
        assertThat(lake.bucketDir().resolve(key)).isRegularFile();
        dataFiles++;
      }
    }
    assertThat(dataFiles).isPositive();
    try (Stream<Path> objects = Files.walk(lake.bucketDir())) {
      assertThat(objects.map(Path::toString).filter(p -> p.endsWith(".metadata.json")).count())
          .as("table metadata written by the REST server to S3")
          .isGreaterThan(1);
    }
    System.out.printf(
        "REST+S3: %d rows, %d data files, %d snapshots%n",
        rows.size(), dataFiles, countSnapshots(table));
  }

  private static int countSnapshots(Table table) {
    int n = 0;
    for (var ignored : table.snapshots()) {
      n++;
    }
    return n;
  }
}
