package org.spatialingest.local;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Rows of an Iceberg table as its current snapshot states them ({@code total-records}); 0 for an
 * empty table.
 */
final class TableRows {
  private TableRows() {}

  static long total(Table table) {
    table.refresh();
    Snapshot current = table.currentSnapshot();
    return current == null
        ? 0
        : Long.parseLong(current.summary().getOrDefault("total-records", "0"));
  }
}
