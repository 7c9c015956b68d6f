package org.spatialingest.config;

import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.sizing.Units;

/**
 * The typed, validated job configuration. Built only through {@link #fromMap}, which rejects unknown keys and bad
 * values with a message naming the key and what is allowed. {@link #KEYS} documents every key and its default.
 */
public record JobConfig(
    String bootstrapServers,
    String topic,
    String groupId,
    StartingOffsets startingOffsets,
    Map<String, String> kafkaProperties,
    CatalogType catalogType,
    String catalogName,
    String warehouse,
    String catalogUri,
    Map<String, String> catalogProperties,
    String namespace,
    String table,
    TimePartitioning partitioning,
    Duration checkpointInterval,
    int sourceParallelism,
    int transformParallelism,
    int sinkParallelism,
    ClosePolicyKind closePolicy,
    long memoryBudgetBytes,
    long targetFileBytes,
    Duration maxLatency,
    int maxOpenPartitions,
    double maxRecordsPerSecond,
    long maxBytesPerSecond,
    InputConfig input,
    TransformConfig transform,
    RegionsConfig regions,
    String deadLetterTopic,
    boolean skipCommitted,
    DistributionMode distribution,
    MaintenanceConfig maintenance)
    implements Serializable {

  /**
   * Where a start without Flink state begins reading: {@code table}, the positions recorded in the table (earliest
   * for partitions it has none for); {@code committed}, the group's offsets (earliest if none); or earliest/latest.
   */
  public enum StartingOffsets { TABLE, COMMITTED, EARLIEST, LATEST }

  public enum CatalogType { HADOOP, JDBC, REST }

  /** Time-only partitioning of {@code event_time}; spatial locality comes from the Hilbert sort inside files. */
  public enum TimePartitioning { DAY, HOUR }

  /** {@code bounded}: close by bytes, latency or memory. {@code every-checkpoint}: close all files at every barrier. */
  public enum ClosePolicyKind { BOUNDED, EVERY_CHECKPOINT }

  /**
   * How rows reach the writers: {@code range}, by time partition and Hilbert-key ranges sized by bytes; {@code hash},
   * by time partition (one writer per partition); {@code none}, each writer takes what its upstream subtask sends.
   */
  public enum DistributionMode { NONE, HASH, RANGE }

  /** Every accepted key with its default ("" = required or unset) and what is allowed. */
  public static final Map<String, String> KEYS;

  static {
    Map<String, String> k = new LinkedHashMap<>();
    k.put("kafka.bootstrap-servers", "localhost:9092|host:port[,host:port...]");
    k.put("kafka.topic", "telemetry|topic name");
    k.put("kafka.group-id", "spatial-ingest|consumer group id");
    k.put("kafka.starting-offsets", "table|table (the positions the table records; earliest where it has none), "
        + "committed (the group's offsets, which the job sets to the table's positions), earliest, latest");
    k.put("kafka.properties.*", "|any Kafka consumer property, e.g. kafka.properties.security.protocol=SASL_SSL");
    k.put("catalog.type", "hadoop|hadoop, jdbc, rest");
    k.put("catalog.name", "spatial|catalog name");
    k.put("catalog.warehouse", "./warehouse|path or URI of the warehouse");
    k.put("catalog.uri", "|JDBC URL (jdbc:sqlite:/path/catalog.db) or REST endpoint; required for jdbc and rest");
    k.put("catalog.properties.*", "|any Iceberg catalog property, e.g. catalog.properties.io-impl");
    k.put("table.namespace", "spatial|namespace");
    k.put("table.name", "telemetry|table name");
    k.put("table.partitioning", "day|day, hour (of event_time)");
    k.put("checkpoint.interval", "10s|duration > 0, e.g. 10s");
    k.put("parallelism.source", "0|0 (environment default) or a positive integer");
    k.put("parallelism.transform", "0|0 (environment default) or a positive integer");
    k.put("parallelism.sink", "0|0 (environment default) or a positive integer");
    k.put("sink.close-policy", "bounded|bounded, every-checkpoint");
    k.put("sink.memory-budget", "128MB|size > 0 per writer subtask, e.g. 128MB, 64MiB");
    k.put("sink.target-file-size", "128MB|size > 0 of a committed data file, e.g. 128MB");
    k.put("sink.max-latency", "120s|duration > 0, e.g. 120s");
    k.put("sink.max-open-partitions", "8|positive integer");
    k.put("sink.distribution", "range|range (by time partition and Hilbert-key ranges: as many ranges as the bytes per "
        + "L fill files of T, boundaries from the keys seen), hash (by time partition only), none (no exchange: every "
        + "writer writes every partition, files x writers)");
    k.put("admission.max-records-per-second", "0|records/s per source subtask, 0 = no cap");
    k.put("admission.max-bytes-per-second", "0|Kafka value bytes/s per source subtask (e.g. 5MB), 0 = no cap");
    k.put("source", "kafka|kafka, file:<path> (a file or a directory of newline-delimited records; bounded)");
    k.put("source.skip-committed", "true|true, false: on a start without state, skip records the tables already hold "
        + "(by the positions and source columns they record); false re-appends them");
    k.put("input.format", "geojson|geojson, wkt, wkb-hex, wkb-base64, feature");
    k.put("input.typed-properties", "|name:type list (types string, long, double, boolean), e.g. speed:double,vehicle:string");
    k.put("transform.reproject-from", "|EPSG code of the input coordinates, e.g. EPSG:3857; empty = already CRS84");
    k.put("transform.validate", "true|true, false");
    k.put("transform.repair", "true|true, false (repairs only invalid geometries; needs transform.validate)");
    k.put("transform.simplify-tolerance", "0|tolerance >= 0 in degrees; 0 = off");
    k.put("transform.simplify-min-vertices", "1000|positive integer; only geometries with more vertices are simplified");
    k.put("transform.simplify-method", "topology|topology, douglas-peucker");
    k.put("transform.max-vertices", "1000000|positive integer");
    k.put("transform.max-record-bytes", "16MiB|size > 0 of one record");
    k.put("transform.budget-vertices", "500000|positive integer: most vertices validation, repair and simplification "
        + "run on");
    k.put("transform.budget-pair-tests", "20000000|positive integer: most edge-pair tests validation (and vertex x ring "
        + "tests topology-preserving simplification) may need");
    k.put("transform.budget-repair-size", "1000|positive integer: most rings, and most crossings, repair may handle");
    k.put("transform.budget-repair-pair-tests", "5000000|positive integer, at most transform.budget-pair-tests: most "
        + "edge-pair tests repair may need");
    k.put("transform.budget-time", "2s|duration > 0: a geometry step starts only while the record has used less");
    k.put("regions.refresh-kind", "|properties.kind value of boundary refresh records; empty = no region enrichment");
    k.put("regions.name-property", "region|property holding a refresh's region name");
    k.put("rejects.dead-letter-topic", "|Kafka topic that also receives every reject (at-least-once; same brokers and "
        + "kafka.properties); empty = rejects table only");
    k.put("regions.bootstrap", "|path of a file of boundary refresh records (the job's input format, one per line) "
        + "loaded when the job is built, so the first rows already get their region; empty = none");
    k.put("regions.partition", "false|true, false: also partition the table by region (identity, after the time; "
        + "needs regions.refresh-kind; a handful of regions only)");
    // ---- table maintenance (issue #15): Iceberg's org.apache.iceberg.flink.maintenance inside the job -------------
    k.put("maintenance.enabled", "false|true, false: expire snapshots (and, with maintenance.delete-orphan-files, "
        + "delete orphan files) of the telemetry and rejects tables inside the job, with Iceberg's Flink "
        + "TableMaintenance under its JDBC lock; Kafka source only (a bounded run gets none)");
    k.put("maintenance.lock.jdbc-uri", "|JDBC URL of the maintenance lock database (Iceberg's JdbcLockFactory, tables "
        + "created if missing), e.g. jdbc:sqlite:/data/locks.db; empty = catalog.uri when catalog.type is jdbc");
    k.put("maintenance.rate-limit", "60s|duration > 0: least time between two runs of a maintenance task; also how "
        + "often the tables are polled for new commits");
    k.put("maintenance.expire-snapshots.max-age", "24h|duration, at least sink.max-latency + checkpoint.interval: "
        + "snapshots older than this are expired; keep it above the age of the oldest savepoint or retained checkpoint "
        + "the job may be restored from (the sink refuses such a restore rather than guess)");
    k.put("maintenance.expire-snapshots.retain-last", "10|positive integer: snapshots never expired, however old");
    k.put("maintenance.expire-snapshots.every-commits", "100|positive integer: expire after this many new commits");
    k.put("maintenance.delete-orphan-files", "false|true, false: also delete files in the tables' data directories "
        + "that no snapshot references; only when those directories are the sink's own (no other writer)");
    k.put("maintenance.delete-orphan-files.min-age", "72h|duration, at least maintenance.expire-snapshots.max-age: "
        + "only files older than this are deleted");
    k.put("maintenance.delete-orphan-files.interval", "24h|duration > 0: how often orphan files are looked for");
    // ---- end of table maintenance keys -----------------------------------------------------------------------------
    KEYS = Collections.unmodifiableMap(k);
  }

  public SizingBounds sizingBounds() {
    return new SizingBounds(memoryBudgetBytes, targetFileBytes, maxLatency, checkpointInterval);
  }

  /** A copy with some keys changed, validated like the original. */
  public JobConfig with(Map<String, String> overrides) {
    Map<String, String> map = toMap();
    map.putAll(overrides);
    return fromMap(map);
  }

  public static JobConfig defaults() {
    return fromMap(Map.of());
  }

  public static JobConfig fromMap(Map<String, String> raw) {
    for (String key : raw.keySet()) {
      if (!KEYS.containsKey(key) && !isPassThrough(key)) {
        throw new ConfigException("unknown configuration key '" + key + "'; allowed keys: " + allowedKeys());
      }
    }
    Reader r = new Reader(raw);
    CatalogType catalogType = r.enumValue("catalog.type", CatalogType.class);
    String catalogUri = r.string("catalog.uri");
    if (catalogType != CatalogType.HADOOP && catalogUri.isEmpty()) {
      throw new ConfigException("catalog.uri is required when catalog.type is " + lower(catalogType.name()));
    }
    return new JobConfig(
        r.nonEmpty("kafka.bootstrap-servers"),
        r.nonEmpty("kafka.topic"),
        r.nonEmpty("kafka.group-id"),
        r.enumValue("kafka.starting-offsets", StartingOffsets.class),
        r.prefixed("kafka.properties."),
        catalogType,
        r.nonEmpty("catalog.name"),
        r.nonEmpty("catalog.warehouse"),
        catalogUri,
        r.prefixed("catalog.properties."),
        r.nonEmpty("table.namespace"),
        r.nonEmpty("table.name"),
        r.enumValue("table.partitioning", TimePartitioning.class),
        r.positiveDuration("checkpoint.interval"),
        r.parallelism("parallelism.source"),
        r.parallelism("parallelism.transform"),
        r.parallelism("parallelism.sink"),
        r.enumValue("sink.close-policy", ClosePolicyKind.class),
        r.positiveBytes("sink.memory-budget"),
        r.positiveBytes("sink.target-file-size"),
        r.positiveDuration("sink.max-latency"),
        r.positiveInt("sink.max-open-partitions"),
        r.nonNegativeDouble("admission.max-records-per-second"),
        r.nonNegativeBytes("admission.max-bytes-per-second"),
        new InputConfig(
            r.parsed("source", InputConfig::parseSource),
            r.enumValue("input.format", InputConfig.InputFormat.class),
            r.parsed("input.typed-properties", InputConfig::parseTyped)),
        transform(r),
        regions(r),
        r.string("rejects.dead-letter-topic"),
        r.bool("source.skip-committed"),
        r.enumValue("sink.distribution", DistributionMode.class),
        maintenance(r, catalogType, catalogUri));
  }

  // ---- table maintenance (issue #15) ------------------------------------------------------------------------------
  private static MaintenanceConfig maintenance(Reader r, CatalogType catalogType, String catalogUri) {
    boolean enabled = r.bool("maintenance.enabled");
    String lockUri = r.string("maintenance.lock.jdbc-uri");
    if (enabled && lockUri.isEmpty() && catalogType != CatalogType.JDBC) {
      throw new ConfigException("maintenance.enabled needs maintenance.lock.jdbc-uri (a JDBC database for Iceberg's "
          + "maintenance lock) unless catalog.type is jdbc");
    }
    Duration maxAge = r.positiveDuration("maintenance.expire-snapshots.max-age");
    Duration commitWindow = r.positiveDuration("sink.max-latency").plus(r.positiveDuration("checkpoint.interval"));
    if (enabled && maxAge.compareTo(commitWindow) < 0) {
      throw new ConfigException("maintenance.expire-snapshots.max-age (" + maxAge + ") must be at least "
          + "sink.max-latency + checkpoint.interval (" + commitWindow + "): the sink looks up its batches in the "
          + "snapshots of that window before every commit");
    }
    Duration orphanMinAge = r.positiveDuration("maintenance.delete-orphan-files.min-age");
    boolean deleteOrphans = r.bool("maintenance.delete-orphan-files");
    if (enabled && deleteOrphans && orphanMinAge.compareTo(maxAge) < 0) {
      throw new ConfigException("maintenance.delete-orphan-files.min-age (" + orphanMinAge + ") must be at least "
          + "maintenance.expire-snapshots.max-age (" + maxAge + "): a state that old may still commit its files");
    }
    return new MaintenanceConfig(enabled, lockUri.isEmpty() ? catalogUri : lockUri,
        r.positiveDuration("maintenance.rate-limit"), maxAge,
        r.positiveInt("maintenance.expire-snapshots.retain-last"),
        r.positiveInt("maintenance.expire-snapshots.every-commits"),
        deleteOrphans, orphanMinAge,
        r.positiveDuration("maintenance.delete-orphan-files.interval"));
  }
  // ---- end of table maintenance ------------------------------------------------------------------------------------

  private static RegionsConfig regions(Reader r) {
    RegionsConfig regions = new RegionsConfig(r.string("regions.refresh-kind"), r.nonEmpty("regions.name-property"),
        r.bool("regions.partition"), r.string("regions.bootstrap"));
    if (!regions.bootstrap().isEmpty() && !regions.enabled()) {
      throw new ConfigException("regions.bootstrap needs regions.refresh-kind (it names which records are refreshes)");
    }
    if (regions.partition() && !regions.enabled()) {
      throw new ConfigException("regions.partition needs regions.refresh-kind (without refreshes every region is null)");
    }
    return regions;
  }

  private static TransformConfig transform(Reader r) {
    boolean validate = r.bool("transform.validate");
    boolean repair = r.bool("transform.repair");
    if (repair && !validate) {
      throw new ConfigException("transform.repair needs transform.validate: true (only invalid geometries are repaired)");
    }
    double tolerance = r.parsed("transform.simplify-tolerance", Double::parseDouble);
    if (!(tolerance >= 0) || Double.isInfinite(tolerance)) {
      throw new ConfigException("transform.simplify-tolerance has value '" + tolerance + "'; allowed: "
          + allowedOf("transform.simplify-tolerance"));
    }
    return new TransformConfig(
        r.parsed("transform.reproject-from", TransformConfig::parseEpsg),
        validate,
        repair,
        tolerance,
        r.positiveInt("transform.simplify-min-vertices"),
        r.enumValue("transform.simplify-method", TransformConfig.SimplifyMethod.class),
        r.positiveInt("transform.max-vertices"),
        r.positiveBytes("transform.max-record-bytes"),
        budget(r));
  }

  private static TransformConfig.Budget budget(Reader r) {
    long pairTests = r.positiveLong("transform.budget-pair-tests");
    long repairPairTests = r.positiveLong("transform.budget-repair-pair-tests");
    if (repairPairTests > pairTests) {
      throw new ConfigException("transform.budget-repair-pair-tests (" + repairPairTests + ") must be at most "
          + "transform.budget-pair-tests (" + pairTests + ")");
    }
    return new TransformConfig.Budget(r.positiveInt("transform.budget-vertices"), pairTests,
        r.positiveInt("transform.budget-repair-size"), repairPairTests,
        r.positiveDuration("transform.budget-time").toMillis());
  }

  /** The configuration as flat keys, the inverse of {@link #fromMap}. */
  public Map<String, String> toMap() {
    Map<String, String> m = new TreeMap<>();
    m.put("kafka.bootstrap-servers", bootstrapServers);
    m.put("kafka.topic", topic);
    m.put("kafka.group-id", groupId);
    m.put("kafka.starting-offsets", lower(startingOffsets.name()));
    kafkaProperties.forEach((k, v) -> m.put("kafka.properties." + k, v));
    m.put("catalog.type", lower(catalogType.name()));
    m.put("catalog.name", catalogName);
    m.put("catalog.warehouse", warehouse);
    if (!catalogUri.isEmpty()) {
      m.put("catalog.uri", catalogUri);
    }
    catalogProperties.forEach((k, v) -> m.put("catalog.properties." + k, v));
    m.put("table.namespace", namespace);
    m.put("table.name", table);
    m.put("table.partitioning", lower(partitioning.name()));
    m.put("checkpoint.interval", checkpointInterval.toMillis() + "ms");
    m.put("parallelism.source", Integer.toString(sourceParallelism));
    m.put("parallelism.transform", Integer.toString(transformParallelism));
    m.put("parallelism.sink", Integer.toString(sinkParallelism));
    m.put("sink.close-policy", lower(closePolicy.name()).replace('_', '-'));
    m.put("sink.memory-budget", Long.toString(memoryBudgetBytes));
    m.put("sink.target-file-size", Long.toString(targetFileBytes));
    m.put("sink.max-latency", maxLatency.toMillis() + "ms");
    m.put("sink.max-open-partitions", Integer.toString(maxOpenPartitions));
    m.put("sink.distribution", lower(distribution.name()));
    m.put("admission.max-records-per-second", Double.toString(maxRecordsPerSecond));
    m.put("admission.max-bytes-per-second", Long.toString(maxBytesPerSecond));
    m.put("source", input.sourceSpec());
    m.put("source.skip-committed", Boolean.toString(skipCommitted));
    m.put("input.format", lower(input.format().name()).replace('_', '-'));
    m.put("input.typed-properties", input.typedSpec());
    m.put("transform.reproject-from", transform.reprojectFrom() == null ? "" : transform.reprojectFrom());
    m.put("transform.validate", Boolean.toString(transform.validate()));
    m.put("transform.repair", Boolean.toString(transform.repair()));
    m.put("transform.simplify-tolerance", Double.toString(transform.simplifyTolerance()));
    m.put("transform.simplify-min-vertices", Integer.toString(transform.simplifyMinVertices()));
    m.put("transform.simplify-method", lower(transform.simplifyMethod().name()).replace('_', '-'));
    m.put("transform.max-vertices", Integer.toString(transform.maxVertices()));
    m.put("transform.max-record-bytes", Long.toString(transform.maxRecordBytes()));
    m.put("transform.budget-vertices", Integer.toString(transform.budget().vertices()));
    m.put("transform.budget-pair-tests", Long.toString(transform.budget().pairTests()));
    m.put("transform.budget-repair-size", Integer.toString(transform.budget().repairSize()));
    m.put("transform.budget-repair-pair-tests", Long.toString(transform.budget().repairPairTests()));
    m.put("transform.budget-time", transform.budget().millis() + "ms");
    m.put("regions.refresh-kind", regions.refreshKind());
    m.put("regions.name-property", regions.nameProperty());
    m.put("regions.bootstrap", regions.bootstrap());
    m.put("regions.partition", Boolean.toString(regions.partition()));
    m.put("rejects.dead-letter-topic", deadLetterTopic);
    // ---- table maintenance (issue #15)
    m.put("maintenance.enabled", Boolean.toString(maintenance.enabled()));
    if (!maintenance.lockJdbcUri().isEmpty() && !maintenance.lockJdbcUri().equals(catalogUri)) {
      m.put("maintenance.lock.jdbc-uri", maintenance.lockJdbcUri());
    }
    m.put("maintenance.rate-limit", maintenance.rateLimit().toMillis() + "ms");
    m.put("maintenance.expire-snapshots.max-age", maintenance.expireMaxAge().toMillis() + "ms");
    m.put("maintenance.expire-snapshots.retain-last", Integer.toString(maintenance.expireRetainLast()));
    m.put("maintenance.expire-snapshots.every-commits", Integer.toString(maintenance.expireEveryCommits()));
    m.put("maintenance.delete-orphan-files", Boolean.toString(maintenance.deleteOrphans()));
    m.put("maintenance.delete-orphan-files.min-age", maintenance.orphanMinAge().toMillis() + "ms");
    m.put("maintenance.delete-orphan-files.interval", maintenance.orphanInterval().toMillis() + "ms");
    return m;
  }

  private static boolean isPassThrough(String key) {
    return (key.startsWith("kafka.properties.") && key.length() > "kafka.properties.".length())
        || (key.startsWith("catalog.properties.") && key.length() > "catalog.properties.".length());
  }

  private static String allowedKeys() {
    return String.join(", ", KEYS.keySet());
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }

  private static String defaultOf(String key) {
    String spec = KEYS.get(key);
    return spec.substring(0, spec.indexOf('|'));
  }

  private static String allowedOf(String key) {
    String spec = KEYS.get(key);
    return spec.substring(spec.indexOf('|') + 1);
  }

  /** Reads one key at a time, falling back to the default and naming the key in every error. */
  private static final class Reader {
    private final Map<String, String> raw;

    Reader(Map<String, String> raw) {
      this.raw = raw;
    }

    String string(String key) {
      String value = raw.get(key);
      return value == null ? defaultOf(key) : value.trim();
    }

    String nonEmpty(String key) {
      String value = string(key);
      if (value.isEmpty()) {
        throw new ConfigException(key + " must not be empty; allowed: " + allowedOf(key));
      }
      return value;
    }

    <E extends Enum<E>> E enumValue(String key, Class<E> type) {
      String value = string(key);
      String normalized = value.toUpperCase(Locale.ROOT).replace('-', '_');
      for (E constant : type.getEnumConstants()) {
        if (constant.name().equals(normalized)) {
          return constant;
        }
      }
      throw new ConfigException(key + " has value '" + value + "'; allowed: " + allowedOf(key));
    }

    <T> T parsed(String key, Function<String, T> parser) {
      String value = string(key);
      try {
        return parser.apply(value);
      } catch (RuntimeException e) {
        throw new ConfigException(key + " has value '" + value + "': " + e.getMessage() + "; allowed: "
            + allowedOf(key), e);
      }
    }

    long positiveBytes(String key) {
      long bytes = parsed(key, Units::parseBytes);
      if (bytes <= 0) {
        throw new ConfigException(key + " must be > 0; allowed: " + allowedOf(key));
      }
      return bytes;
    }

    Duration positiveDuration(String key) {
      Duration d = parsed(key, Units::parseDuration);
      if (d.isZero() || d.isNegative()) {
        throw new ConfigException(key + " must be > 0; allowed: " + allowedOf(key));
      }
      return d;
    }

    double nonNegativeDouble(String key) {
      double v = parsed(key, Double::parseDouble);
      if (!(v >= 0) || Double.isInfinite(v)) {
        throw new ConfigException(key + " has value '" + v + "'; allowed: " + allowedOf(key));
      }
      return v;
    }

    long nonNegativeBytes(String key) {
      long v = parsed(key, Units::parseBytes);
      if (v < 0) {
        throw new ConfigException(key + " has value '" + v + "'; allowed: " + allowedOf(key));
      }
      return v;
    }

    boolean bool(String key) {
      String value = string(key).toLowerCase(Locale.ROOT);
      return switch (value) {
        case "true" -> true;
        case "false" -> false;
        default -> throw new ConfigException(key + " has value '" + value + "'; allowed: " + allowedOf(key));
      };
    }

    long positiveLong(String key) {
      long v = parsed(key, Long::parseLong);
      if (v <= 0) {
        throw new ConfigException(key + " has value '" + v + "'; allowed: " + allowedOf(key));
      }
      return v;
    }

    int positiveInt(String key) {
      int v = parsed(key, Integer::parseInt);
      if (v <= 0) {
        throw new ConfigException(key + " has value '" + v + "'; allowed: " + allowedOf(key));
      }
      return v;
    }

    int parallelism(String key) {
      int v = parsed(key, Integer::parseInt);
      if (v < 0) {
        throw new ConfigException(key + " has value '" + v + "'; allowed: " + allowedOf(key));
      }
      return v;
    }

    Map<String, String> prefixed(String prefix) {
      Map<String, String> out = new TreeMap<>();
      raw.forEach((k, v) -> {
        if (k.startsWith(prefix)) {
          out.put(k.substring(prefix.length()), v);
        }
      });
      return Collections.unmodifiableMap(out);
    }
  }
}
