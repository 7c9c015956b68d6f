package org.spatialingest.config;

import java.io.Serializable;
import java.time.Duration;

/**
 * Iceberg's own Flink table maintenance ({@code org.apache.iceberg.flink.maintenance}) run inside
 * the job for the telemetry and rejects tables: expiring snapshots, and optionally deleting orphan
 * files, under Iceberg's JDBC lock.
 *
 * @param enabled attach the maintenance to an unbounded job
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
    boolean enabled,
    String lockJdbcUri,
    Duration rateLimit,
    Duration expireMaxAge,
    int expireRetainLast,
    int expireEveryCommits,
    boolean deleteOrphans,
    Duration orphanMinAge,
    Duration orphanInterval)
    implements Serializable {}
