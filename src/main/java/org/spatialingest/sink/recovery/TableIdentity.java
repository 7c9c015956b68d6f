package org.spatialingest.sink.recovery;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.iceberg.Table;

/**
 * Which tables a sink's state belongs to: each table's name and UUID, in the sink's table order,
 * kept in state beside the aggregator's. A savepoint restored onto another table, or onto a table
 * dropped and created again under the same name (a new UUID), would resume from offsets whose rows
 * that table never held: refused. States of builds before it carry none, and pass.
 */
@Internal
public final class TableIdentity {
  private TableIdentity() {}

  /** {@code <name> <uuid>} of each table. */
  public static List<String> of(List<Table> tables) {
    List<String> ids = new ArrayList<>();
    for (Table t : tables) {
      ids.add(t.name() + " " + t.uuid());
    }
    return ids;
  }

  /**
   * @throws SuppressRestartsException if {@code restored} (empty: a state of an older build) names
   *     other tables than {@code current}
   */
  public static void refuseAnother(List<String> restored, List<String> current) {
    if (restored.isEmpty() || restored.equals(current)) {
      return;
    }
    throw new SuppressRestartsException(
        new IllegalStateException(
            "Refusing to restore: this state was taken writing "
                + restored
                + " (table name and UUID), but the job writes "
                + current
                + ": another table, or the table was dropped and created again. Its Kafka offsets"
                + " and staging runs belong to that table; restoring them here would leave out"
                + " every record before the offsets. Nothing was changed. Way out: start the job"
                + " without state (no -s: it resumes from the positions this table records), or"
                + " point the job at the table the state was taken from."));
  }
}
