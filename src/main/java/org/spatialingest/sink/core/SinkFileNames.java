package org.spatialingest.sink.core;

import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;

/**
 * The names of the files a sink writes, and how to read them back: every data file and staging run
 * carries the sink's uid prefix and the token of the writer instance that wrote it, so after a
 * restore the sink can tell its own unreferenced files from anyone else's ({@code
 * recovery.OrphanCleaner}).
 *
 * <p>Data files: Iceberg's {@code OutputFileFactory} names, {@code
 * <partition>-<task>-<operationId>-<count>.parquet}, with operation id {@code <uid>_<token>}.
 * Staging runs: {@code <table>/_staging/<uid>/<checkpoint>-<token>-<n>.rows} (a directory whose
 * name starts with {@code _}, which Iceberg's orphan-file removal skips).
 */
@Internal
public final class SinkFileNames {
  private static final Pattern DATA =
      Pattern.compile("^\\d+-\\d+-(.+)_([0-9a-f]{32})-\\d+(\\.[a-z]+)?$");
  private static final Pattern STAGING = Pattern.compile("^(\\d{19})-([0-9a-f]{32})-\\d+\\.rows$");

  private SinkFileNames() {}

  public static String newToken() {
    return UUID.randomUUID().toString().replace("-", "");
  }

  public static String operationId(String uid, String token) {
    return uid + "_" + token;
  }

  /** The writer token in a data file name written by the sink {@code uid}, or {@code null}. */
  public static String dataFileToken(String uid, String location) {
    Matcher m = DATA.matcher(fileName(location));
    return m.matches() && m.group(1).equals(uid) ? m.group(2) : null;
  }

  public static String stagingDir(String tableLocation, String uid) {
    return tableLocation + "/_staging/" + uid;
  }

  public static String stagingRun(
      String tableLocation, String uid, long checkpointId, String token, int sequence) {
    return String.format(
        "%s/%019d-%s-%d.rows", stagingDir(tableLocation, uid), checkpointId, token, sequence);
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
