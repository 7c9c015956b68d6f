package org.spatialingest.config;

import java.io.Serializable;
import java.time.Duration;
import org.spatialingest.sink.options.SnapshotExpiry;

/**
 * How the telemetry and rejects tables' snapshots are expired: by the sink's committer after its
 * commits (the default), or by Iceberg's own Flink table maintenance ({@code
 * org.apache.iceberg.flink.maintenance}) run inside the job under Iceberg's JDBC lock, which can
 * also delete orphan files.
 *
 * @param expireBySink the sink's committer expires the snapshots (when {@code enabled} is not set)
 * @param enabled attach Iceberg's maintenance to an unbounded job
 * @param lockJdbcUri JDBC URL of the lock database; empty = the catalog's when {@code catalog.type}
 *     is jdbc
 * @param rateLimit least time between two runs of a task (Iceberg's {@code
 *     TableMaintenance.rateLimit}); also how often the table is polled for new commits
 * @param expireMaxAge snapshots older than this are expired (never the newest {@code
 *     expireRetainLast})
 * @param expireRetainLast snapshots always kept
 * @param expireEveryCommits expire after this many new commits
 * @param deleteOrphans delete files in the tables' data directories that no snapshot references
 * @param orphanMinAge only files older than this are orphans
 * @param orphanInterval how often to look for orphans
 */
public record MaintenanceConfig(
    boolean expireBySink,
    boolean enabled,
    String lockJdbcUri,
    Duration rateLimit,
    Duration expireMaxAge,
    int expireRetainLast,
    int expireEveryCommits,
    boolean deleteOrphans,
    Duration orphanMinAge,
    Duration orphanInterval)
    implements Serializable {

  /** What the sink's committer expires, or null: off, or Iceberg's maintenance does it. */
  public SnapshotExpiry sinkExpiry() {
    return expireBySink && !enabled
        ? new SnapshotExpiry(expireMaxAge, expireRetainLast, expireEveryCommits)
        : null;
  }
}
