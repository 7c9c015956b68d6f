package org.spatialingest.sink.core;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;

/**
 * The names of the files a sink writes, and how to read them back: every data file and staging run
 * carries the sink's scope ({@link SinkScope}: uid prefix and sink id) and the token of the writer
 * instance that wrote it, so after a restore the sink can tell its own unreferenced files from
 * anyone else's, another job's writing the same table included ({@code recovery.OrphanCleaner}).
 *
 * <p>Data files: Iceberg's {@code OutputFileFactory} names, {@code
 * <partition>-<task>-<operationId>-<count>.parquet}, with operation id {@code
 * <uid>.<sinkId>_<token>}. Staging runs: {@code
 * <table>/_staging/sinks/<sinkId>/<uid>/<checkpoint>-<token>-<n>.rows} (a directory whose name
 * starts with {@code _}, which Iceberg's orphan-file removal skips), next to the sink's lease
 * ({@link #leaseFile}) and the pending batches' closed files ({@link #batchFile}: {@code
 * <checkpoint>-<token>.batch}, token of the aggregator instance that wrote it).
 *
 * <p>Builds before sink ids wrote operation id {@code <uid>_<token>} and runs under {@code
 * <table>/_staging/<uid>/}: those <em>unscoped</em> files belong to the sink that {@link
 * SinkScope#claimsUnscoped() claims} them. The scoped directory is deliberately not below the
 * unscoped one, so an older build's clean-up, which lists {@code _staging/<uid>}, never sees a
 * scoped run.
 */
@Internal
public final class SinkFileNames {
  private static final Pattern DATA =
      Pattern.compile("^\\d+-\\d+-(.+)_([0-9a-f]{32})-\\d+(\\.[a-z]+)?$");
  private static final Pattern STAGING = Pattern.compile("^(\\d{19})-([0-9a-f]{32})-\\d+\\.rows$");
  private static final Pattern BATCH = Pattern.compile("^(\\d{19})-([0-9a-f]{32})\\.batch$");
  private static final String LEASE = "lease";
  private static final Pattern BATCH_DIR =
      Pattern.compile("^.*/_staging/sinks/([^/]+)/([^/]+)/(\\d{19})-([0-9a-f]{32})\\.batch$");
  private static final Pattern BATCH_MANIFEST =
      Pattern.compile("^(.+)_([0-9a-f]{32})-(\\d{19})-t\\d+-\\d+-m\\.avro$");

  private SinkFileNames() {}

  public static String newToken() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  public static String operationId(SinkScope scope, String token) {
    return scope.uid() + "." + scope.sinkId() + "_" + token;
  }

  /**
   * The writer token in the name of a data file of {@code scope} (or, if it claims them, an
   * unscoped one of its uid), or {@code null}: a file of another sink id is never this sink's.
   */
  public static String dataFileToken(SinkScope scope, String location) {
    Matcher m = DATA.matcher(fileName(location));
    if (!m.matches()) {
      return null;
    }
    String owner = m.group(1);
    boolean own =
        owner.equals(scope.uid() + "." + scope.sinkId())
            || (scope.claimsUnscoped() && owner.equals(scope.uid()));
    return own ? m.group(2) : null;
  }

  /** The directory of this sink's staging runs and lease in a table. */
  public static String stagingDir(String tableLocation, SinkScope scope) {
    return tableLocation + "/_staging/sinks/" + scope.sinkId() + "/" + scope.uid();
  }

  /**
   * Every directory whose staging runs belong to {@code scope}: its own, and the unscoped one of
   * earlier builds if it claims that.
   */
  public static List<String> stagingDirs(String tableLocation, SinkScope scope) {
    List<String> dirs = new ArrayList<>(List.of(stagingDir(tableLocation, scope)));
    if (scope.claimsUnscoped()) {
      dirs.add(tableLocation + "/_staging/" + scope.uid());
    }
    return dirs;
  }

  public static String stagingRun(
      String tableLocation, SinkScope scope, long checkpointId, String token, int sequence) {
    return String.format(
        "%s/%019d-%s-%d.rows", stagingDir(tableLocation, scope), checkpointId, token, sequence);
  }

  /**
   * Where the aggregator instance {@code token} keeps the closed files of the batch it released at
   * {@code checkpointId} until the batch is committed ({@code commit.StoredBatches}); in the
   * primary table's staging directory.
   */
  public static String batchFile(
      String tableLocation, SinkScope scope, long checkpointId, String token) {
    return String.format(
        "%s/%019d-%s.batch", stagingDir(tableLocation, scope), checkpointId, token);
  }

  /** {checkpoint id, token} of a batch file's location, or {@code null} if it is not one. */
  public static StagingName parseBatch(String location) {
    Matcher m = BATCH.matcher(fileName(location));
    return m.matches() ? new StagingName(Long.parseLong(m.group(1)), m.group(2)) : null;
  }

  /**
   * The name stem, in a table's metadata directory, of the manifests its files of the batch stored
   * at {@code batchLocation} are appended as ({@code commit.BatchManifests} adds {@code
   * -<n>-m.avro}): {@code <uid>.<sink id>_<aggregator token>-<checkpoint>-t<table index>}, so the
   * orphan clean-up knows its scope and its aggregator instance, and a re-commit of the batch
   * writes the same names.
   *
   * @throws IllegalArgumentException if {@code batchLocation} is not a {@link #batchFile}
   */
  public static String batchManifestStem(String batchLocation, int table) {
    Matcher m = BATCH_DIR.matcher(batchLocation);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a stored batch's location: " + batchLocation);
    }
    return String.format("%s.%s_%s-%s-t%d", m.group(2), m.group(1), m.group(4), m.group(3), table);
  }

  /**
   * {checkpoint id, aggregator token} of a batch manifest of {@code scope} ({@link
   * #batchManifestStem}), or {@code null} if the location is not one of this scope's.
   */
  public static StagingName parseBatchManifest(SinkScope scope, String location) {
    Matcher m = BATCH_MANIFEST.matcher(fileName(location));
    if (!m.matches() || !m.group(1).equals(scope.uid() + "." + scope.sinkId())) {
      return null;
    }
    return new StagingName(Long.parseLong(m.group(3)), m.group(2));
  }

  /** The liveness lease of the sink's scope in a table ({@code recovery.SinkLease}). */
  public static String leaseFile(String tableLocation, SinkScope scope) {
    return stagingDir(tableLocation, scope) + "/" + LEASE;
  }

  /** Whether a location is a sink's lease file. */
  public static boolean isLease(String location) {
    return fileName(location).equals(LEASE) && location.contains("/_staging/sinks/");
  }

  /** {checkpoint id, token} of a staging run's location, or {@code null} if it is not one. */
  public static StagingName parseStaging(String location) {
    Matcher m = STAGING.matcher(fileName(location));
    return m.matches() ? new StagingName(Long.parseLong(m.group(1)), m.group(2)) : null;
  }

  public record StagingName(long checkpointId, String token) {}

  private static String fileName(String location) {
    return location.substring(location.lastIndexOf('/') + 1);
  }
}
