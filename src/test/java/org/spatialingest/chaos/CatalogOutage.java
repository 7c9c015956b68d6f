package org.spatialingest.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;

/**
 * Makes a SQLite-backed JDBC catalog unavailable to every other client: another client takes the
 * database's exclusive lock (as a long maintenance transaction would), so every read and commit of
 * the catalog fails with "database is locked" until it is released.
 */
final class CatalogOutage {
  private CatalogOutage() {}

  static void hold(String jdbcUrl, Duration outage) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl);
        Statement s = c.createStatement()) {
      s.execute(
          "PRAGMA busy_timeout = 60000"); // wait for a commit in flight, then lock everyone out
      s.execute("BEGIN EXCLUSIVE");
      try {
        Thread.sleep(outage.toMillis());
      } finally {
        s.execute("ROLLBACK");
      }
    }
  }
}
