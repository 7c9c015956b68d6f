package org.spatialingest.config;

import static org.spatialingest.config.JobOptions.ADMISSION_MAX_BYTES_PER_SECOND;
import static org.spatialingest.config.JobOptions.ADMISSION_MAX_RECORDS_PER_SECOND;
import static org.spatialingest.config.JobOptions.CATALOG_NAME;
import static org.spatialingest.config.JobOptions.CATALOG_PROPERTIES;
import static org.spatialingest.config.JobOptions.CATALOG_TYPE;
import static org.spatialingest.config.JobOptions.CATALOG_URI;
import static org.spatialingest.config.JobOptions.CATALOG_WAREHOUSE;
import static org.spatialingest.config.JobOptions.CHECKPOINT_INTERVAL;
import static org.spatialingest.config.JobOptions.INPUT_AUTO_COLUMNS_ALLOW;
import static org.spatialingest.config.JobOptions.INPUT_AUTO_COLUMNS_MAX;
import static org.spatialingest.config.JobOptions.INPUT_FORMAT;
import static org.spatialingest.config.JobOptions.INPUT_TYPED_PROPERTIES;
import static org.spatialingest.config.JobOptions.KAFKA_BOOTSTRAP_SERVERS;
import static org.spatialingest.config.JobOptions.KAFKA_GROUP_ID;
import static org.spatialingest.config.JobOptions.KAFKA_ON_GAP;
import static org.spatialingest.config.JobOptions.KAFKA_PROPERTIES;
import static org.spatialingest.config.JobOptions.KAFKA_RESET_POSITIONS;
import static org.spatialingest.config.JobOptions.KAFKA_STARTING_OFFSETS;
import static org.spatialingest.config.JobOptions.KAFKA_TOPIC;
import static org.spatialingest.config.JobOptions.MAINTENANCE_DELETE_ORPHANS;
import static org.spatialingest.config.JobOptions.MAINTENANCE_ENABLED;
import static org.spatialingest.config.JobOptions.MAINTENANCE_EXPIRE_EVERY_COMMITS;
import static org.spatialingest.config.JobOptions.MAINTENANCE_EXPIRE_MAX_AGE;
import static org.spatialingest.config.JobOptions.MAINTENANCE_EXPIRE_RETAIN_LAST;
import static org.spatialingest.config.JobOptions.MAINTENANCE_EXPIRE_SNAPSHOTS;
import static org.spatialingest.config.JobOptions.MAINTENANCE_LOCK_JDBC_URI;
import static org.spatialingest.config.JobOptions.MAINTENANCE_ORPHAN_INTERVAL;
import static org.spatialingest.config.JobOptions.MAINTENANCE_ORPHAN_MIN_AGE;
import static org.spatialingest.config.JobOptions.MAINTENANCE_RATE_LIMIT;
import static org.spatialingest.config.JobOptions.PARALLELISM_SINK;
import static org.spatialingest.config.JobOptions.PARALLELISM_SOURCE;
import static org.spatialingest.config.JobOptions.PARALLELISM_TRANSFORM;
import static org.spatialingest.config.JobOptions.REGIONS_BOOTSTRAP;
import static org.spatialingest.config.JobOptions.REGIONS_NAME_PROPERTY;
import static org.spatialingest.config.JobOptions.REGIONS_PARTITION;
import static org.spatialingest.config.JobOptions.REGIONS_REFRESH_KIND;
import static org.spatialingest.config.JobOptions.REJECTS_DEAD_LETTER_TOPIC;
import static org.spatialingest.config.JobOptions.SINK_CLOSE_POLICY;
import static org.spatialingest.config.JobOptions.SINK_DISTRIBUTION;
import static org.spatialingest.config.JobOptions.SINK_ID;
import static org.spatialingest.config.JobOptions.SINK_MAX_LATENCY;
import static org.spatialingest.config.JobOptions.SINK_MAX_OPEN_PARTITIONS;
import static org.spatialingest.config.JobOptions.SINK_MAX_PARKED_PARTITIONS;
import static org.spatialingest.config.JobOptions.SINK_MEMORY_BUDGET;
import static org.spatialingest.config.JobOptions.SINK_ROW_GROUPS_PER_FILE;
import static org.spatialingest.config.JobOptions.SINK_TARGET_FILE_SIZE;
import static org.spatialingest.config.JobOptions.SOURCE;
import static org.spatialingest.config.JobOptions.SOURCE_FILE_LAST_LINE;
import static org.spatialingest.config.JobOptions.SOURCE_FILE_MAX_BYTES_PER_CHECKPOINT;
import static org.spatialingest.config.JobOptions.SOURCE_FILE_MAX_FILES_PER_CHECKPOINT;
import static org.spatialingest.config.JobOptions.SOURCE_SKIP_COMMITTED;
import static org.spatialingest.config.JobOptions.TABLE_NAME;
import static org.spatialingest.config.JobOptions.TABLE_NAMESPACE;
import static org.spatialingest.config.JobOptions.TABLE_PARTITIONING;
import static org.spatialingest.config.JobOptions.TRANSFORM_BUDGET_PAIR_TESTS;
import static org.spatialingest.config.JobOptions.TRANSFORM_BUDGET_REPAIR_PAIR_TESTS;
import static org.spatialingest.config.JobOptions.TRANSFORM_BUDGET_REPAIR_SIZE;
import static org.spatialingest.config.JobOptions.TRANSFORM_BUDGET_TIME;
import static org.spatialingest.config.JobOptions.TRANSFORM_BUDGET_VERTICES;
import static org.spatialingest.config.JobOptions.TRANSFORM_MAX_RECORD_BYTES;
import static org.spatialingest.config.JobOptions.TRANSFORM_MAX_VERTICES;
import static org.spatialingest.config.JobOptions.TRANSFORM_REPAIR;
import static org.spatialingest.config.JobOptions.TRANSFORM_REPROJECT_FROM;
import static org.spatialingest.config.JobOptions.TRANSFORM_SIMPLIFY_METHOD;
import static org.spatialingest.config.JobOptions.TRANSFORM_SIMPLIFY_MIN_VERTICES;
import static org.spatialingest.config.JobOptions.TRANSFORM_SIMPLIFY_TOLERANCE;
import static org.spatialingest.config.JobOptions.TRANSFORM_VALIDATE;

import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sizing.SizingBounds;

/**
 * The typed, validated job configuration. Built only through {@link #fromMap}, which rejects
 * unknown keys and bad values with a message naming the key and what is allowed. Every key is
 * declared once, in {@link JobOptions}.
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
    int maxParkedPartitions,
    int rowGroupsPerFile,
    double maxRecordsPerSecond,
    long maxBytesPerSecond,
    InputConfig input,
    TransformConfig transform,
    RegionsConfig regions,
    String deadLetterTopic,
    boolean skipCommitted,
    DistributionMode distribution,
    MaintenanceConfig maintenance,
    String sinkId,
    OnGap onGap,
    String resetPositions)
    implements Serializable {

  /**
   * What the job does when offsets it still needs were deleted from Kafka (key {@code
   * kafka.on-gap}).
   */
  public enum OnGap {
    FAIL,
    CONTINUE
  }

  /**
   * Where a start without Flink state begins reading: {@code table}, the positions recorded in the
   * table (earliest for partitions it has none for); {@code committed}, the group's offsets
   * (earliest if none); or earliest/latest.
   */
  public enum StartingOffsets {
    TABLE,
    COMMITTED,
    EARLIEST,
    LATEST
  }

  public enum CatalogType {
    HADOOP,
    JDBC,
    REST
  }

  /**
   * Time-only partitioning of {@code event_time}; spatial locality comes from the Hilbert sort
   * inside files.
   */
  public enum TimePartitioning {
    DAY,
    HOUR
  }

  /** Every accepted key, as declared in {@link JobOptions}, by name. */
  public static final Map<String, JobOption<?>> KEYS;

  static {
    Map<String, JobOption<?>> k = new LinkedHashMap<>();
    JobOptions.ALL.forEach(option -> k.put(option.key(), option));
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
    Secrets.remember(raw);
    for (String key : raw.keySet()) {
      if (!KEYS.containsKey(key) && !isPassThrough(key)) {
        throw new ConfigException(
            "unknown configuration key '" + key + "'; allowed keys: " + allowedKeys());
      }
    }
    Reader r = new Reader(raw);
    CatalogType catalogType = r.get(CATALOG_TYPE);
    String catalogUri = r.get(CATALOG_URI);
    if (catalogType != CatalogType.HADOOP && catalogUri.isEmpty()) {
      throw new ConfigException(
          "catalog.uri is required when catalog.type is " + lower(catalogType.name()));
    }
    return new JobConfig(
        r.get(KAFKA_BOOTSTRAP_SERVERS),
        r.get(KAFKA_TOPIC),
        r.get(KAFKA_GROUP_ID),
        r.get(KAFKA_STARTING_OFFSETS),
        r.get(KAFKA_PROPERTIES),
        catalogType,
        r.get(CATALOG_NAME),
        r.get(CATALOG_WAREHOUSE),
        catalogUri,
        r.get(CATALOG_PROPERTIES),
        r.get(TABLE_NAMESPACE),
        r.get(TABLE_NAME),
        r.get(TABLE_PARTITIONING),
        r.get(CHECKPOINT_INTERVAL),
        r.get(PARALLELISM_SOURCE),
        r.get(PARALLELISM_TRANSFORM),
        r.get(PARALLELISM_SINK),
        r.get(SINK_CLOSE_POLICY),
        r.get(SINK_MEMORY_BUDGET),
        r.get(SINK_TARGET_FILE_SIZE),
        r.get(SINK_MAX_LATENCY),
        r.get(SINK_MAX_OPEN_PARTITIONS),
        r.get(SINK_MAX_PARKED_PARTITIONS),
        r.get(SINK_ROW_GROUPS_PER_FILE),
        r.get(ADMISSION_MAX_RECORDS_PER_SECOND),
        r.get(ADMISSION_MAX_BYTES_PER_SECOND),
        input(r),
        transform(r),
        regions(r),
        r.get(REJECTS_DEAD_LETTER_TOPIC),
        r.get(SOURCE_SKIP_COMMITTED),
        r.get(SINK_DISTRIBUTION),
        maintenance(r, catalogType, catalogUri),
        sinkId(r),
        r.get(KAFKA_ON_GAP),
        r.get(KAFKA_RESET_POSITIONS));
  }

  /**
   * {@code kafka.reset-positions} checked: empty, {@code earliest}, {@code latest} or an ISO-8601
   * instant; returned as given (lower-cased keywords).
   */
  public static String resetPositionsRule(String value) {
    String v = value.trim();
    if (v.isEmpty() || v.equalsIgnoreCase("earliest") || v.equalsIgnoreCase("latest")) {
      return v.toLowerCase(java.util.Locale.ROOT);
    }
    java.time.Instant.parse(v); // throws: not allowed
    return v;
  }

  /**
   * The instant of a {@code kafka.reset-positions} timestamp, or null for empty, {@code earliest},
   * {@code latest}.
   */
  public java.time.Instant resetPositionsInstant() {
    return resetPositions.isEmpty()
            || resetPositions.equals("earliest")
            || resetPositions.equals("latest")
        ? null
        : java.time.Instant.parse(resetPositions);
  }

  /** The sink id a job gets when {@code sink.id} is empty: its {@code kafka.group-id}, cleaned. */
  private static String defaultSinkId(String groupId) {
    String derived = groupId.replaceAll("[^A-Za-z0-9._-]", "_");
    return derived.length() > 64 ? derived.substring(0, 64) : derived;
  }

  /**
   * Whether the sink id is the default one ({@code kafka.group-id}'s): such a sink also owns the
   * staging runs and files that builds before sink ids left in its tables, so upgrading a single
   * job needs no change.
   */
  public boolean sinkIdIsDefault() {
    return sinkId.equals(defaultSinkId(groupId));
  }

  private static final Pattern SINK_ID_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  /** {@code sink.id} as set, or derived from {@code kafka.group-id} when empty. */
  private static String sinkId(Reader r) {
    String set = r.get(SINK_ID);
    if (set.isEmpty()) {
      return defaultSinkId(r.get(KAFKA_GROUP_ID));
    }
    if (!SINK_ID_PATTERN.matcher(set).matches()) {
      throw new ConfigException(
          "sink.id '"
              + set
              + "' is not allowed: letters, digits, '.', '_', '-' (at most 64); empty = kafka.group-id");
    }
    return set;
  }

  private static InputConfig input(Reader r) {
    InputConfig.TypedProperties typed = r.get(INPUT_TYPED_PROPERTIES);
    int max = r.get(INPUT_AUTO_COLUMNS_MAX);
    List<String> allow = r.get(INPUT_AUTO_COLUMNS_ALLOW);
    return new InputConfig(
        r.get(SOURCE),
        r.get(INPUT_FORMAT),
        typed.declared(),
        typed.auto() ? new InputConfig.AutoColumns(allow, max) : null,
        r.get(SOURCE_FILE_LAST_LINE),
        onlyForFiles(r, SOURCE_FILE_MAX_FILES_PER_CHECKPOINT, 0),
        onlyForFiles(r, SOURCE_FILE_MAX_BYTES_PER_CHECKPOINT, 0L));
  }

  /** {@code option}'s value, refused (naming it) when set for a source other than a file. */
  private static <T> T onlyForFiles(Reader r, JobOption<T> option, T off) {
    T value = r.get(option);
    if (!value.equals(off) && r.get(SOURCE) == null) {
      throw new ConfigException(
          option.key()
              + " applies to a file source (source: file:<path>) only; this job reads Kafka. Remove it, or cap "
              + "Kafka with admission.max-records-per-second / admission.max-bytes-per-second");
    }
    return value;
  }

  private static MaintenanceConfig maintenance(
      Reader r, CatalogType catalogType, String catalogUri) {
    boolean enabled = r.get(MAINTENANCE_ENABLED);
    String lockUri = r.get(MAINTENANCE_LOCK_JDBC_URI);
    if (enabled && lockUri.isEmpty() && catalogType != CatalogType.JDBC) {
      throw new ConfigException(
          "maintenance.enabled needs maintenance.lock.jdbc-uri (a JDBC database for Iceberg's "
              + "maintenance lock) unless catalog.type is jdbc");
    }
    Duration maxAge = r.get(MAINTENANCE_EXPIRE_MAX_AGE);
    Duration commitWindow = r.get(SINK_MAX_LATENCY).plus(r.get(CHECKPOINT_INTERVAL));
    boolean expireBySink = r.get(MAINTENANCE_EXPIRE_SNAPSHOTS);
    if ((enabled || expireBySink) && maxAge.compareTo(commitWindow) < 0) {
      throw new ConfigException(
          "maintenance.expire-snapshots.max-age ("
              + maxAge
              + ") must be at least "
              + "sink.max-latency + checkpoint.interval ("
              + commitWindow
              + "): the sink looks up its batches in the "
              + "snapshots of that window before every commit (or set "
              + "maintenance.expire-snapshots.enabled: false and expire snapshots another way)");
    }
    Duration orphanMinAge = r.get(MAINTENANCE_ORPHAN_MIN_AGE);
    boolean deleteOrphans = r.get(MAINTENANCE_DELETE_ORPHANS);
    if (enabled && deleteOrphans && orphanMinAge.compareTo(maxAge) < 0) {
      throw new ConfigException(
          "maintenance.delete-orphan-files.min-age ("
              + orphanMinAge
              + ") must be at least "
              + "maintenance.expire-snapshots.max-age ("
              + maxAge
              + "): a state that old may still commit its files");
    }
    return new MaintenanceConfig(
        expireBySink,
        enabled,
        lockUri.isEmpty() ? catalogUri : lockUri,
        r.get(MAINTENANCE_RATE_LIMIT),
        maxAge,
        r.get(MAINTENANCE_EXPIRE_RETAIN_LAST),
        r.get(MAINTENANCE_EXPIRE_EVERY_COMMITS),
        deleteOrphans,
        orphanMinAge,
        r.get(MAINTENANCE_ORPHAN_INTERVAL));
  }

  private static RegionsConfig regions(Reader r) {
    RegionsConfig regions =
        new RegionsConfig(
            r.get(REGIONS_REFRESH_KIND),
            r.get(REGIONS_NAME_PROPERTY),
            r.get(REGIONS_PARTITION),
            r.get(REGIONS_BOOTSTRAP));
    if (!regions.bootstrap().isEmpty() && !regions.enabled()) {
      throw new ConfigException(
          "regions.bootstrap needs regions.refresh-kind (it names which records are refreshes)");
    }
    if (regions.partition() && !regions.enabled()) {
      throw new ConfigException(
          "regions.partition needs regions.refresh-kind (without refreshes every region is null)");
    }
    return regions;
  }

  private static TransformConfig transform(Reader r) {
    boolean validate = r.get(TRANSFORM_VALIDATE);
    boolean repair = r.get(TRANSFORM_REPAIR);
    if (repair && !validate) {
      throw new ConfigException(
          "transform.repair needs transform.validate: true (only invalid geometries are repaired)");
    }
    return new TransformConfig(
        r.get(TRANSFORM_REPROJECT_FROM),
        validate,
        repair,
        r.get(TRANSFORM_SIMPLIFY_TOLERANCE),
        r.get(TRANSFORM_SIMPLIFY_MIN_VERTICES),
        r.get(TRANSFORM_SIMPLIFY_METHOD),
        r.get(TRANSFORM_MAX_VERTICES),
        r.get(TRANSFORM_MAX_RECORD_BYTES),
        budget(r));
  }

  private static TransformConfig.Budget budget(Reader r) {
    long pairTests = r.get(TRANSFORM_BUDGET_PAIR_TESTS);
    long repairPairTests = r.get(TRANSFORM_BUDGET_REPAIR_PAIR_TESTS);
    if (repairPairTests > pairTests) {
      throw new ConfigException(
          "transform.budget-repair-pair-tests ("
              + repairPairTests
              + ") must be at most "
              + "transform.budget-pair-tests ("
              + pairTests
              + ")");
    }
    return new TransformConfig.Budget(
        r.get(TRANSFORM_BUDGET_VERTICES),
        pairTests,
        r.get(TRANSFORM_BUDGET_REPAIR_SIZE),
        repairPairTests,
        r.get(TRANSFORM_BUDGET_TIME).toMillis());
  }

  /**
   * The configuration as flat keys, the inverse of {@link #fromMap}: every declared key, written by
   * its type.
   */
  public Map<String, String> toMap() {
    Map<String, String> m = new TreeMap<>();
    JobOptions.ALL.forEach(option -> option.write(this, m));
    return m;
  }

  /** {@link #toMap} as it may be shown: credentials masked ({@link Secrets}). */
  public Map<String, String> redactedMap() {
    return Secrets.redact(toMap());
  }

  /** The keys and values, credentials masked: a record's own toString would print them. */
  @Override
  public String toString() {
    return "JobConfig" + redactedMap();
  }

  private static boolean isPassThrough(String key) {
    return KAFKA_PROPERTIES.covers(key) || CATALOG_PROPERTIES.covers(key);
  }

  private static String allowedKeys() {
    return String.join(", ", KEYS.keySet());
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }

  /** Reads the keys of one map, each by its declaration. */
  private record Reader(Map<String, String> raw) {
    <T> T get(JobOption<T> option) {
      return option.read(raw);
    }
  }
}
