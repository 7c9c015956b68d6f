package org.spatialingest.config;

import static org.spatialingest.config.JobOption.Type.BOOLEAN;
import static org.spatialingest.config.JobOption.Type.NON_NEGATIVE_BYTES;
import static org.spatialingest.config.JobOption.Type.NON_NEGATIVE_DOUBLE;
import static org.spatialingest.config.JobOption.Type.NON_NEGATIVE_INT;
import static org.spatialingest.config.JobOption.Type.PARALLELISM;
import static org.spatialingest.config.JobOption.Type.PASS_THROUGH;
import static org.spatialingest.config.JobOption.Type.POSITIVE_BYTES;
import static org.spatialingest.config.JobOption.Type.POSITIVE_DURATION;
import static org.spatialingest.config.JobOption.Type.POSITIVE_INT;
import static org.spatialingest.config.JobOption.Type.POSITIVE_LONG;
import static org.spatialingest.config.JobOption.Type.nonEmpty;
import static org.spatialingest.config.JobOption.Type.oneOf;
import static org.spatialingest.config.JobOption.Type.parsed;
import static org.spatialingest.config.JobOption.Type.text;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sink.options.SinkOption;
import org.spatialingest.sink.options.SinkOptions;

/**
 * Every job configuration key, each declared once: name, default, type and the description README's
 * configuration table shows (ConfigDocsTest checks the table against these declarations, row by
 * row). To add a key: declare it here with {@link #option}, give {@link JobConfig} (or one of its
 * parts) the field its getter reads, read it in {@link JobConfig#fromMap} with {@code r.get(KEY)},
 * and add its row to README's table.
 */
public final class JobOptions {
  private static final List<JobOption<?>> DECLARED = new ArrayList<>();

  public static final JobOption<String> KAFKA_BOOTSTRAP_SERVERS =
      option(
          "kafka.bootstrap-servers",
          "localhost:9092",
          nonEmpty("host:port[,host:port...]"),
          JobConfig::bootstrapServers,
          "host:port list");
  public static final JobOption<String> KAFKA_TOPIC =
      option("kafka.topic", "telemetry", nonEmpty("topic name"), JobConfig::topic, "");
  public static final JobOption<String> KAFKA_GROUP_ID =
      option(
          "kafka.group-id",
          "spatial-ingest",
          nonEmpty("consumer group id"),
          JobConfig::groupId,
          "after every commit the sink sets the group's offsets to the table's positions, so the group's lag is what the "
              + "table still misses (the source's own offset commits are off); the job restores from its checkpoints");
  public static final JobOption<JobConfig.StartingOffsets> KAFKA_STARTING_OFFSETS =
      option(
          "kafka.starting-offsets",
          "table",
          oneOf(JobConfig.StartingOffsets.class),
          JobConfig::startingOffsets,
          "only for a start without state, and only for partitions the table has no position of this `sink.id` "
              + "for: every partition it has one for resumes exactly there in every mode (a group offset above it "
              + "never skips rows). The rule for the others: `table` and `earliest` (the first offset), "
              + "`committed` (the group's offset; the first offset if none), `latest` (the end)");
  public static final JobOption<JobConfig.OnGap> KAFKA_ON_GAP =
      option(
          "kafka.on-gap",
          "fail",
          oneOf(JobConfig.OnGap.class),
          JobConfig::onGap,
          "`fail`, `continue`: when the next offset the table or the job's state needs is no longer in Kafka "
              + "(retention, `kafka-delete-records`), at start or while running: `fail` stops the job naming the "
              + "topic, partition, first missing and first available offset; `continue` goes on from the first "
              + "available offset and records the gap in the commit's snapshot summary, `inspect` and a metric. A "
              + "gap while running (records deleted before the reader got to them, or a restored offset no longer "
              + "in Kafka) stops the job with `fail` (the consumer's "
              + "`auto.offset.reset` is `none`); with `continue` the consumer goes on from the first offset and the "
              + "gap is recorded the same way (an empty snapshot with `gaps`, before any commit passes it)");
  public static final JobOption<String> KAFKA_RESET_POSITIONS =
      option(
          "kafka.reset-positions",
          "",
          JobOption.Type.parsed(
              "empty, `earliest`, `latest` or an ISO-8601 instant",
              JobConfig::resetPositionsRule,
              s -> s),
          JobConfig::resetPositions,
          "empty, `earliest`, `latest`, an ISO-8601 instant (`2026-12-01T00:00:00Z`): where to start when the "
              + "table's positions of this sink cannot apply: they were taken from another Kafka cluster (another "
              + "cluster id), or the table holds this sink's rows but no positions can be found. Empty: such a start "
              + "is refused. Used only then (ignored, with an INFO, while the positions apply), and recorded in the "
              + "first commit's snapshot summary; that commit's positions name the new cluster, so it applies once");
  public static final JobOption<Map<String, String>> KAFKA_PROPERTIES =
      option(
          "kafka.properties.*",
          "",
          PASS_THROUGH,
          JobConfig::kafkaProperties,
          "any Kafka client property, for every client of the job and its tools (source, group offsets, dead "
              + "letters, `plan --topic`), e.g. `kafka.properties.security.protocol: SASL_SSL`; credentials show as "
              + "`******` ([operations](src/site/markdown/operations.md#secured-kafka-credentials-acls-failing-fast)). "
              + "Consumers read with `isolation.level: read_committed` unless it is set here ("
              + "[operations](src/site/markdown/operations.md#operator-actions-and-what-the-job-does))");
  public static final JobOption<JobConfig.CatalogType> CATALOG_TYPE =
      option(
          "catalog.type",
          "hadoop",
          oneOf(JobConfig.CatalogType.class),
          JobConfig::catalogType,
          "`hadoop`, `jdbc`, `rest`");
  public static final JobOption<String> CATALOG_NAME =
      option("catalog.name", "spatial", nonEmpty("catalog name"), JobConfig::catalogName, "");
  public static final JobOption<String> CATALOG_WAREHOUSE =
      option(
          "catalog.warehouse",
          "./warehouse",
          nonEmpty("path or URI of the warehouse"),
          JobConfig::warehouse,
          "path or URI");
  public static final JobOption<String> CATALOG_URI =
      option(
          "catalog.uri",
          "",
          text(),
          JobConfig::catalogUri,
          "JDBC URL (e.g. `jdbc:sqlite:/path/catalog.db`) or REST endpoint; required for `jdbc`, `rest`");
  public static final JobOption<Map<String, String>> CATALOG_PROPERTIES =
      option(
          "catalog.properties.*",
          "",
          PASS_THROUGH,
          JobConfig::catalogProperties,
          "any Iceberg catalog property (`io-impl`, `s3.endpoint`, ...)");
  public static final JobOption<String> TABLE_NAMESPACE =
      option(
          "table.namespace",
          "spatial",
          nonEmpty("namespace"),
          JobConfig::namespace,
          "created if missing");
  public static final JobOption<String> TABLE_NAME =
      option(
          "table.name",
          "telemetry",
          nonEmpty("table name"),
          JobConfig::table,
          "created if missing");
  public static final JobOption<JobConfig.TimePartitioning> TABLE_PARTITIONING =
      option(
          "table.partitioning",
          "day",
          oneOf(JobConfig.TimePartitioning.class),
          JobConfig::partitioning,
          "`day`, `hour` (of `event_time`)");
  public static final JobOption<Duration> CHECKPOINT_INTERVAL =
      option(
          "checkpoint.interval",
          "10s",
          POSITIVE_DURATION,
          JobConfig::checkpointInterval,
          "C: for recovery; commits follow bytes and time");
  public static final JobOption<Integer> PARALLELISM_SOURCE =
      option(
          "parallelism.source",
          "0",
          PARALLELISM,
          JobConfig::sourceParallelism,
          "0 = environment default");
  public static final JobOption<Integer> PARALLELISM_TRANSFORM =
      option(
          "parallelism.transform",
          "0",
          PARALLELISM,
          JobConfig::transformParallelism,
          "0 = environment default");
  public static final JobOption<Integer> PARALLELISM_SINK =
      option(
          "parallelism.sink",
          "0",
          PARALLELISM,
          JobConfig::sinkParallelism,
          "0 = environment default");
  public static final JobOption<ClosePolicyKind> SINK_CLOSE_POLICY =
      option(
          SinkOptions.CLOSE_POLICY,
          oneOf(ClosePolicyKind.class),
          JobConfig::closePolicy,
          "`bounded`, `every-checkpoint` (what Iceberg's own sink does; for comparison)");
  public static final JobOption<Long> SINK_MEMORY_BUDGET =
      option(
          "sink.memory-budget",
          "128MB",
          POSITIVE_BYTES,
          JobConfig::memoryBudgetBytes,
          "M per writer subtask (`KB MB GB` = 10^n, `KiB MiB GiB` = 2^n)");
  public static final JobOption<Long> SINK_TARGET_FILE_SIZE =
      option(
          "sink.target-file-size",
          "128MB",
          POSITIVE_BYTES,
          JobConfig::targetFileBytes,
          "T, size of the committed Parquet file");
  public static final JobOption<Duration> SINK_MAX_LATENCY =
      option(
          SinkOptions.MAX_LATENCY,
          POSITIVE_DURATION,
          JobConfig::maxLatency,
          "L; every row is in a file closed at a checkpoint within L + C of its Kafka timestamp, "
              + "committed when that checkpoint completes");
  public static final JobOption<Integer> SINK_MAX_OPEN_PARTITIONS =
      option(
          SinkOptions.MAX_OPEN_PARTITIONS,
          POSITIVE_INT,
          JobConfig::maxOpenPartitions,
          "partition buffers per writer held in memory; past it the least recently written is parked: its rows "
              + "go to its staging run and leave memory, and it closes later by T, L or the end of input, so input "
              + "that interleaves more time partitions (a backfill in id order) still writes files of T "
              + "([operations](src/site/markdown/operations.md#backfills-many-partitions-at-once))");
  public static final JobOption<Integer> SINK_MAX_PARKED_PARTITIONS =
      option(
          SinkOptions.MAX_PARKED_PARTITIONS,
          NON_NEGATIVE_INT,
          JobConfig::maxParkedPartitions,
          "parked buffers per writer: each keeps its totals on the heap (outside M) and its runs on the staging "
              + "area until it closes; past it the least recently written parked buffer closes as a file "
              + "(`partition_limit`, the log warns). 0 = never park (every buffer past `sink.max-open-partitions` closes)");
  public static final JobOption<Integer> SINK_ROW_GROUPS_PER_FILE =
      option(
          SinkOptions.ROW_GROUPS_PER_FILE,
          POSITIVE_INT,
          JobConfig::rowGroupsPerFile,
          "Parquet row groups of T / n bytes, each with its own column statistics (bbox, time), so a filter "
              + "skips most of a Hilbert-sorted file (measured: a 10° box reads 0.29× the bytes of one row group "
              + "per file, a full scan within noise; [benchmarks](src/site/markdown/benchmarks.md#row-groups-per-file-issue-36-part-3)); "
              + "1 = one row group per file; a table property `write.parquet.row-group-size-bytes` wins");
  public static final JobOption<DistributionMode> SINK_DISTRIBUTION =
      option(
          SinkOptions.DISTRIBUTION,
          oneOf(DistributionMode.class),
          JobConfig::distribution,
          "`range`: rows reach the writers by time partition and Hilbert-key range, as many ranges as the "
              + "bytes per L fill files of T (boundaries from the keys seen), so files follow bytes / T, not the "
              + "writer count, and each covers a compact area; `hash`: by time partition only; `none`: no exchange, "
              + "every writer writes every partition (files × writers)");
  public static final JobOption<String> SINK_ID =
      option(
          "sink.id",
          "",
          text(),
          JobConfig::sinkId,
          "letters, digits, `.`, `_`, `-` (at most 64); empty = `kafka.group-id` (other characters become `_`). "
              + "Scopes this job's positions, staging runs, file names and orphan clean-up in the tables, so "
              + "several jobs can write one table, each with its own id; a second live job with the same id on "
              + "the same table is refused while its lease is live (3 C + 15 s after the last renewal); the "
              + "default id also owns what builds before sink ids left. Keep it across restarts");
  public static final JobOption<Boolean> MAINTENANCE_EXPIRE_SNAPSHOTS =
      option(
          SinkOptions.EXPIRE_SNAPSHOTS,
          BOOLEAN,
          c -> c.maintenance().expireBySink(),
          "`true`, `false`: the sink's committer expires the snapshots of the telemetry and rejects tables after "
              + "its commits (the `maintenance.expire-snapshots.*` keys; no lock; any source), unless "
              + "`maintenance.enabled` gives that to Iceberg's `TableMaintenance`. See "
              + "[operations](src/site/markdown/operations.md#table-maintenance-in-the-job-maintenance)");
  public static final JobOption<Boolean> MAINTENANCE_ENABLED =
      option(
          "maintenance.enabled",
          "false",
          BOOLEAN,
          c -> c.maintenance().enabled(),
          "`true`, `false`: expire snapshots (and, with `maintenance.delete-orphan-files`, delete orphan "
              + "files) of the telemetry and rejects tables inside the job, with Iceberg's Flink `TableMaintenance` "
              + "under its JDBC lock, instead of the sink's expiry; Kafka source only (a bounded run then gets none). See "
              + "[operations](src/site/markdown/operations.md#table-maintenance-in-the-job-maintenance)");
  public static final JobOption<String> MAINTENANCE_LOCK_JDBC_URI =
      option(
          "maintenance.lock.jdbc-uri",
          "",
          text(),
          c -> c.maintenance().lockJdbcUri(),
          "JDBC URL of the maintenance lock database (Iceberg's `JdbcLockFactory`; its table is created if missing), e.g. "
              + "`jdbc:sqlite:/data/locks.db`; empty = `catalog.uri` when `catalog.type` is `jdbc`. Required otherwise "
              + "when maintenance is on");
  public static final JobOption<Duration> MAINTENANCE_RATE_LIMIT =
      option(
          "maintenance.rate-limit",
          "60s",
          POSITIVE_DURATION,
          c -> c.maintenance().rateLimit(),
          "least time between two runs of a maintenance task; also how often the tables are polled for new "
              + "commits");
  public static final JobOption<Duration> MAINTENANCE_EXPIRE_MAX_AGE =
      option(
          SinkOptions.EXPIRE_MAX_AGE,
          POSITIVE_DURATION,
          c -> c.maintenance().expireMaxAge(),
          "snapshots older than this are expired; at least `sink.max-latency` + `checkpoint.interval`; keep it "
              + "above the age of the oldest savepoint or retained checkpoint the job may be restored from (the sink "
              + "refuses such a restore rather than guess)");
  public static final JobOption<Integer> MAINTENANCE_EXPIRE_RETAIN_LAST =
      option(
          SinkOptions.EXPIRE_RETAIN_LAST,
          POSITIVE_INT,
          c -> c.maintenance().expireRetainLast(),
          "snapshots never expired, however old");
  public static final JobOption<Integer> MAINTENANCE_EXPIRE_EVERY_COMMITS =
      option(
          SinkOptions.EXPIRE_EVERY_COMMITS,
          POSITIVE_INT,
          c -> c.maintenance().expireEveryCommits(),
          "expire after this many new commits (commits only, never time: a restart's recommit comes first)");
  public static final JobOption<Boolean> MAINTENANCE_DELETE_ORPHANS =
      option(
          "maintenance.delete-orphan-files",
          "false",
          BOOLEAN,
          c -> c.maintenance().deleteOrphans(),
          "`true`, `false`: also delete files in the tables' data directories (`<location>/data`) that no "
              + "snapshot references; only when that directory is the sink's own (refused for `write.data.path` / "
              + "object-storage layouts)");
  public static final JobOption<Duration> MAINTENANCE_ORPHAN_MIN_AGE =
      option(
          "maintenance.delete-orphan-files.min-age",
          "72h",
          POSITIVE_DURATION,
          c -> c.maintenance().orphanMinAge(),
          "only files older than this are deleted; at least `maintenance.expire-snapshots.max-age`");
  public static final JobOption<Duration> MAINTENANCE_ORPHAN_INTERVAL =
      option(
          "maintenance.delete-orphan-files.interval",
          "24h",
          POSITIVE_DURATION,
          c -> c.maintenance().orphanInterval(),
          "how often orphan files are looked for");
  public static final JobOption<Double> ADMISSION_MAX_RECORDS_PER_SECOND =
      option(
          "admission.max-records-per-second",
          "0",
          NON_NEGATIVE_DOUBLE,
          JobConfig::maxRecordsPerSecond,
          "records/s per source subtask, a Kafka or a file source; 0 = no cap (see [Freshness, admission](src/site/markdown/freshness.md))");
  public static final JobOption<Long> ADMISSION_MAX_BYTES_PER_SECOND =
      option(
          "admission.max-bytes-per-second",
          "0",
          NON_NEGATIVE_BYTES,
          JobConfig::maxBytesPerSecond,
          "record value bytes/s per source subtask, a Kafka or a file source (e.g. `5MB`); 0 = no cap");

  /** The file path of a file source, null for Kafka. */
  public static final JobOption<String> SOURCE =
      option(
          "source",
          "kafka",
          parsed(
              "kafka, file:<path> (a file or a directory of newline-delimited records; bounded)",
              InputConfig::parseSource,
              InputConfig::sourceSpec),
          c -> c.input().filePath(),
          "`kafka`, `file:<path>`: a file or a directory (read recursively, files starting with `.` or `_` skipped) of "
              + "newline-delimited records; bounded: the job ends when all are read. `\\r\\n` accepted, blank lines are "
              + "not records");

  public static final JobOption<InputConfig.FileLastLine> SOURCE_FILE_LAST_LINE =
      option(
          "source.file.last-line",
          "hold",
          oneOf(InputConfig.FileLastLine.class),
          c -> c.input().fileLastLine(),
          "`hold`, `read`: a file source's last line without a newline: `hold` leaves it for a later run (the file "
              + "may still be written; logged, and counted in the summary's `lines-held`), `read` reads it (the file "
              + "is final; a later run refuses the file if it has grown past that line)");
  public static final JobOption<Integer> SOURCE_FILE_MAX_FILES_PER_CHECKPOINT =
      option(
          "source.file.max-files-per-checkpoint",
          "0",
          NON_NEGATIVE_INT,
          c -> c.input().maxFilesPerCheckpoint(),
          "a file source's files handed to its readers between two completed checkpoints, at most (Spark's "
              + "`maxFilesPerTrigger`), so a backfill of many files commits in steps; 0 = no cap. File sources only "
              + "(refused with Kafka)");
  public static final JobOption<Long> SOURCE_FILE_MAX_BYTES_PER_CHECKPOINT =
      option(
          "source.file.max-bytes-per-checkpoint",
          "0",
          NON_NEGATIVE_BYTES,
          c -> c.input().maxBytesPerCheckpoint(),
          "the same in bytes, a soft cap (Spark's `maxBytesPerTrigger`): once a checkpoint's files reach it no "
              + "more are handed out until the next checkpoint completes, and a single file larger than it still "
              + "goes through whole, so the job always moves on; with both caps set, whichever is reached first "
              + "ends the checkpoint's share. 0 = no cap. File sources only (refused with Kafka)");

  public static final JobOption<Boolean> SOURCE_SKIP_COMMITTED =
      option(
          "source.skip-committed",
          "true",
          BOOLEAN,
          JobConfig::skipCommitted,
          "`true`, `false`: on a start without state, skip records the tables already hold (by the positions the table "
              + "records, its `source`/`source_offset` columns and the rejects table's origin columns; operator "
              + "`resume-filter`); `false` re-appends them");
  public static final JobOption<InputConfig.InputFormat> INPUT_FORMAT =
      option(
          "input.format",
          "geojson",
          oneOf(InputConfig.InputFormat.class),
          c -> c.input().format(),
          "`geojson`, `wkt`, `wkb-hex`, `wkb-base64`, `feature`");
  public static final JobOption<InputConfig.TypedProperties> INPUT_TYPED_PROPERTIES =
      option(
          "input.typed-properties",
          "",
          parsed(
              "auto, or a name:type list (types "
                  + InputConfig.PropertyType.spellings()
                  + "), e.g. speed:double,vehicle:string",
              InputConfig::parseTyped,
              InputConfig::typedSpec),
          c ->
              new InputConfig.TypedProperties(
                  c.input().autoColumns() != null, c.input().typedProperties()),
          "`name:type,...` with types `string`, `long`, `double`, `boolean`, `int`, `float`, e.g. `speed:double,vehicle:string`; "
              + "lower-case identifiers, not a base column name; appended to the schema in declared order; "
              + "a restart may add names and widen `int`→`long`, `float`→`double`. Or `auto`: each top-level property "
              + "the stream sends becomes a column as it arrives ([schema.md](src/site/markdown/schema.md))");
  public static final JobOption<List<String>> INPUT_AUTO_COLUMNS_ALLOW =
      option(
          "input.auto-columns.allow",
          "",
          parsed(
              "empty (any name), or lower-case property names, comma separated",
              InputConfig::parseNames,
              names -> String.join(",", names)),
          c -> c.input().autoColumns() == null ? List.of() : c.input().autoColumns().allow(),
          "with `input.typed-properties: auto`: the property names (lower-cased) that may become columns, "
              + "comma separated; empty = any");
  public static final JobOption<Integer> INPUT_AUTO_COLUMNS_MAX =
      option(
          "input.auto-columns.max",
          "64",
          JobOption.Type.checked(
              "integer 1.." + InputConfig.MAX_AUTO_COLUMNS,
              Integer::parseInt,
              v -> v >= 1 && v <= InputConfig.MAX_AUTO_COLUMNS,
              null,
              v -> Integer.toString(v)),
          c -> c.input().autoColumns() == null ? 64 : c.input().autoColumns().maxColumns(),
          "with `input.typed-properties: auto`: the most property columns the table may have; "
              + "properties past it stay in `properties`");

  /** The EPSG code, null when the input is CRS84 already. */
  public static final JobOption<String> TRANSFORM_REPROJECT_FROM =
      option(
          "transform.reproject-from",
          "",
          parsed(
              "EPSG code of the input coordinates, e.g. EPSG:3857; empty = already CRS84",
              TransformConfig::parseEpsg,
              code -> code == null ? "" : code),
          c -> c.transform().reprojectFrom(),
          "EPSG code of the input coordinates (`EPSG:3035` or `3035`; must be known to proj4j-epsg); empty = already "
              + "CRS84");

  public static final JobOption<Boolean> TRANSFORM_VALIDATE =
      option(
          "transform.validate",
          "true",
          BOOLEAN,
          c -> c.transform().validate(),
          "`true`, `false`: `IsValidOp` on every non-point geometry");
  public static final JobOption<Boolean> TRANSFORM_REPAIR =
      option(
          "transform.repair",
          "true",
          BOOLEAN,
          c -> c.transform().repair(),
          "`true`, `false`: `GeometryFixer` on invalid geometries only (needs `transform.validate: true`)");
  public static final JobOption<Double> TRANSFORM_SIMPLIFY_TOLERANCE =
      option(
          "transform.simplify-tolerance",
          "0",
          NON_NEGATIVE_DOUBLE,
          c -> c.transform().simplifyTolerance(),
          "≥ 0, in degrees; 0 = no simplification");
  public static final JobOption<Integer> TRANSFORM_SIMPLIFY_MIN_VERTICES =
      option(
          "transform.simplify-min-vertices",
          "1000",
          POSITIVE_INT,
          c -> c.transform().simplifyMinVertices(),
          "simplify only geometries with more vertices");
  public static final JobOption<TransformConfig.SimplifyMethod> TRANSFORM_SIMPLIFY_METHOD =
      option(
          "transform.simplify-method",
          "topology",
          oneOf(TransformConfig.SimplifyMethod.class),
          c -> c.transform().simplifyMethod(),
          "`topology` (TopologyPreservingSimplifier), `douglas-peucker` (faster, may change topology)");
  public static final JobOption<Integer> TRANSFORM_MAX_VERTICES =
      option(
          "transform.max-vertices",
          "1000000",
          POSITIVE_INT,
          c -> c.transform().maxVertices(),
          "positive integer");
  public static final JobOption<Long> TRANSFORM_MAX_RECORD_BYTES =
      option(
          "transform.max-record-bytes",
          "16MiB",
          POSITIVE_BYTES,
          c -> c.transform().maxRecordBytes(),
          "size > 0");
  public static final JobOption<Integer> TRANSFORM_BUDGET_VERTICES =
      option(
          "transform.budget-vertices",
          "500000",
          POSITIVE_INT,
          c -> c.transform().budget().vertices(),
          "positive integer: most vertices validation, repair and simplification run on (over it: "
              + "`geometry_too_complex`)");
  public static final JobOption<Long> TRANSFORM_BUDGET_PAIR_TESTS =
      option(
          "transform.budget-pair-tests",
          "20000000",
          POSITIVE_LONG,
          c -> c.transform().budget().pairTests(),
          "positive integer: most edge-pair tests validation (and vertex × ring tests topology-preserving "
              + "simplification) may need");
  public static final JobOption<Integer> TRANSFORM_BUDGET_REPAIR_SIZE =
      option(
          "transform.budget-repair-size",
          "1000",
          POSITIVE_INT,
          c -> c.transform().budget().repairSize(),
          "positive integer: most rings, and most crossings, repair may handle");
  public static final JobOption<Long> TRANSFORM_BUDGET_REPAIR_PAIR_TESTS =
      option(
          "transform.budget-repair-pair-tests",
          "5000000",
          POSITIVE_LONG,
          c -> c.transform().budget().repairPairTests(),
          "positive integer, ≤ `transform.budget-pair-tests`: most edge-pair tests repair may need");
  public static final JobOption<Duration> TRANSFORM_BUDGET_TIME =
      option(
          "transform.budget-time",
          "2s",
          POSITIVE_DURATION,
          c -> Duration.ofMillis(c.transform().budget().millis()),
          "duration > 0: a geometry step starts only while the record has used less CPU time (the task thread's, so a "
              + "busy machine does not change the verdict; a backstop: a started step runs to its end)");
  public static final JobOption<String> REJECTS_DEAD_LETTER_TOPIC =
      option(
          "rejects.dead-letter-topic",
          "",
          text(),
          JobConfig::deadLetterTopic,
          "Kafka topic that also receives every reject (at-least-once, same brokers and `kafka.properties`); empty = "
              + "rejects table only");
  public static final JobOption<String> REGIONS_REFRESH_KIND =
      option(
          "regions.refresh-kind",
          "",
          text(),
          c -> c.regions().refreshKind(),
          "`properties.kind` value of boundary refresh records; empty = no region enrichment (no extra operator)");
  public static final JobOption<String> REGIONS_NAME_PROPERTY =
      option(
          "regions.name-property",
          "region",
          nonEmpty("property holding a refresh's region name"),
          c -> c.regions().nameProperty(),
          "property holding a refresh's region name");
  public static final JobOption<String> REGIONS_BOOTSTRAP =
      option(
          "regions.bootstrap",
          "",
          text(),
          c -> c.regions().bootstrap(),
          "path of a file of boundary refresh records (the job's input format, one per line), read where the job is "
              + "built (the `flink run` client), so the first rows already get their region; refreshes from the stream "
              + "replace them when newer. Empty = none");
  public static final JobOption<Boolean> REGIONS_PARTITION =
      option(
          "regions.partition",
          "false",
          BOOLEAN,
          c -> c.regions().partition(),
          "`true`, `false`: also partition the table by `region` (identity, after the time; needs "
              + "`regions.refresh-kind`). Only for a handful of regions: each open (time, region) pair is a buffer of "
              + "its own, so raise `sink.max-open-partitions` to days/hours open × regions (+1 for null)");

  /** Every key in declaration order (README's table order). */
  public static final List<JobOption<?>> ALL = Collections.unmodifiableList(DECLARED);

  private JobOptions() {}

  /** A key the sink declares: its key and default are the sink's ({@link SinkOptions}). */
  private static <T> JobOption<T> option(
      SinkOption<T> sinkOption,
      JobOption.Type<T> type,
      Function<JobConfig, T> value,
      String description) {
    return option(
        sinkOption.key(), type.write().apply(sinkOption.defaultValue()), type, value, description);
  }

  private static <T> JobOption<T> option(
      String key,
      String defaultValue,
      JobOption.Type<T> type,
      Function<JobConfig, T> value,
      String description) {
    JobOption<T> option = new JobOption<>(key, defaultValue, type, value, description);
    DECLARED.add(option);
    return option;
  }
}
