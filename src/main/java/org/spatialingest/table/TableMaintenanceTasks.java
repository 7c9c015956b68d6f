package org.spatialingest.table;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.maintenance.api.DeleteOrphanFiles;
import org.apache.iceberg.flink.maintenance.api.ExpireSnapshots;
import org.apache.iceberg.flink.maintenance.api.JdbcLockFactory;
import org.apache.iceberg.flink.maintenance.api.TableMaintenance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.MaintenanceConfig;

/**
 * Iceberg's own Flink table maintenance ({@link TableMaintenance}) for the telemetry and rejects
 * tables, in the sink's job: each table gets a monitor source that watches its commits, {@link
 * ExpireSnapshots} every {@code maintenance.expire-snapshots.every-commits} commits and, with
 * {@code maintenance.delete-orphan-files}, {@link DeleteOrphanFiles} on an interval; one task at a
 * time per table, under Iceberg's {@link JdbcLockFactory} lock (lock id: the table's name).
 *
 * <p>What the sink needs of the history: before every commit it looks for the batch id in the
 * snapshots made since the batch was (IcebergBatchCommitter), on a restore from an older state it
 * reverts the batches committed since that state (RestoreReconciler), and a start without state
 * reads the positions of the current snapshot (TablePositions, always kept). The retention ({@code
 * max-age} at least L + C, so every batch's own window is kept) covers the first; a state older
 * than the retained history is refused by the sink rather than reconciled by guess. Expiry is
 * triggered by commits only, never by time: after a restart the sink's recommit of the restored
 * batches comes before any new commit, so nothing is expired before that lookup. Orphan deletion
 * only looks at the tables' data directories (not the sink's staging area or the metadata), and
 * only files older than {@code min-age} (at least {@code max-age}).
 *
 * <p>RewriteDataFiles is deliberately not offered: a restore from an older state reverts the
 * batches committed since by deleting the files they added, which a compaction would have replaced.
 */
public final class TableMaintenanceTasks {
  private static final Logger LOG = LoggerFactory.getLogger(TableMaintenanceTasks.class);

  /** Iceberg's default, shortened when the rate limit is shorter. */
  private static final Duration LOCK_CHECK_DELAY = Duration.ofSeconds(30);

  private TableMaintenanceTasks() {}

  /** Adds the maintenance of both tables to {@code env}; the tables must exist. */
  public static void attach(StreamExecutionEnvironment env, JobConfig config) {
    MaintenanceConfig m = config.maintenance();
    createLockTable(config);
    attach(env, config, Catalogs.tableIdentifier(config), Catalogs.tableLoader(config), m);
    attach(
        env,
        config,
        Catalogs.rejectsTableIdentifier(config),
        Catalogs.rejectsTableLoader(config),
        m);
  }

  /**
   * Creates the lock table if missing, once, here: the operators of both tables creating it at the
   * same time race (the loser fails with "table already exists").
   */
  private static void createLockTable(JobConfig config) {
    Map<String, String> props = lockProperties(config);
    props.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "true");
    try (JdbcLockFactory lock =
        new JdbcLockFactory(config.maintenance().lockJdbcUri(), "init", props)) {
      lock.open();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, String> lockProperties(JobConfig config) {
    Map<String, String> props = new HashMap<>();
    if (config.maintenance().lockJdbcUri().equals(config.catalogUri())) {
      config
          .catalogProperties()
          .forEach(
              (k, v) -> {
                if (k.startsWith("jdbc.")) {
                  props.put(k, v); // the catalog database's credentials
                }
              });
    }
    props.put(JdbcLockFactory.INIT_LOCK_TABLES_PROPERTY, "false");
    return props;
  }

  private static void attach(
      StreamExecutionEnvironment env,
      JobConfig config,
      TableIdentifier id,
      TableLoader loader,
      MaintenanceConfig m) {
    JdbcLockFactory lock =
        new JdbcLockFactory(m.lockJdbcUri(), id.toString(), lockProperties(config));
    String suffix = id.name();
    TableMaintenance.Builder builder =
        TableMaintenance.forTable(env, loader, lock)
            .uidSuffix("maintenance-" + suffix)
            .rateLimit(m.rateLimit())
            .lockCheckDelay(
                m.rateLimit().compareTo(LOCK_CHECK_DELAY) < 0 ? m.rateLimit() : LOCK_CHECK_DELAY)
            .parallelism(1)
            .add(
                ExpireSnapshots.builder()
                    .maxSnapshotAge(m.expireMaxAge())
                    .retainLast(m.expireRetainLast())
                    .scheduleOnCommitCount(m.expireEveryCommits()));
    if (m.deleteOrphans()) {
      builder.add(
          DeleteOrphanFiles.builder()
              .location(dataDirectory(loader, id))
              .minAge(m.orphanMinAge())
              .scheduleOnInterval(m.orphanInterval()));
    }
    try {
      builder.append();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot add the table maintenance of " + id, e);
    }
    LOG.info(
        "Table maintenance for {}: expire snapshots older than {} (keeping the last {}) every {} commits{}",
        id,
        m.expireMaxAge(),
        m.expireRetainLast(),
        m.expireEveryCommits(),
        m.deleteOrphans()
            ? "; delete orphan files older than "
                + m.orphanMinAge()
                + " every "
                + m.orphanInterval()
            : "");
  }

  /**
   * The directory the sink writes the table's data files in: {@code <location>/data}. A table whose
   * data files go elsewhere ({@code write.data.path}, object-storage layout) may share that place
   * with other writers, so orphan deletion is refused for it.
   */
  static String dataDirectory(TableLoader loader, TableIdentifier id) {
    try (TableLoader l = loader.clone()) {
      l.open();
      Table table = l.loadTable();
      if (table.properties().containsKey(TableProperties.WRITE_DATA_LOCATION)
          || Boolean.parseBoolean(table.properties().get(TableProperties.OBJECT_STORE_ENABLED))) {
        throw new IllegalStateException(
            "maintenance.delete-orphan-files: table "
                + id
                + " writes its data files "
                + "outside <location>/data (write.data.path or write.object-storage.enabled), which may be shared; "
                + "orphan deletion is only for a location that is the sink's own");
      }
      return table.location() + "/data";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
