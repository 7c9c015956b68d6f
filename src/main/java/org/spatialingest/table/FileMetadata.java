package org.spatialingest.table;

import java.io.Serializable;
import java.util.Map;
import org.apache.flink.table.data.RowData;

/**
 * Key/value metadata a table wants in the footer of each of its data files, computed from that
 * file's rows (the sink holds a file's rows before writing it, so the summary is known when the
 * writer is built).
 */
public interface FileMetadata extends Serializable {
  /** A fresh summary for one file. */
  Summary summary();

  /** Sees each row of one file, then tells its footer metadata. */
  interface Summary {
    void add(RowData row);

    Map<String, String> metadata();
  }
}
