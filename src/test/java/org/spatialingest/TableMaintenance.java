package org.spatialingest;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.Table;
import org.apache.iceberg.actions.RewriteDataFilesActionResult;
import org.apache.iceberg.flink.actions.Actions;

/**
 * Table maintenance as a platform team runs it next to the job: Iceberg's own Flink compaction
 * action.
 */
public final class TableMaintenance {
  private TableMaintenance() {}

  /**
   * Rewrites the table's data files into larger ones ({@code rewriteDataFiles}: a batch Flink job
   * on {@code env}, committing one replace snapshot).
   *
   * @return how many data files the commit removed
   */
  public static int rewriteDataFiles(StreamExecutionEnvironment env, Table table) {
    table.refresh();
    RewriteDataFilesActionResult result = Actions.forTable(env, table).rewriteDataFiles().execute();
    return result.deletedDataFiles().size();
  }
}
