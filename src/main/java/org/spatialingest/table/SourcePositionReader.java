package org.spatialingest.table;

import java.io.Serializable;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;

/**
 * Where a table row's source record came from: the source key ({@link SourceKeys}) and the record's
 * position in that source (a Kafka offset, or a 1-based file line). The sink tracks both per row to
 * record, with every commit, the position below which every record is in the tables ({@link
 * TablePositions}).
 */
@PublicEvolving
public interface SourcePositionReader extends Serializable {
  /** The row's source key, or {@code null} if the row carries none (then it is not tracked). */
  StringData key(RowData row);

  /** The row's position in its source; only called when {@link #key} is not null. */
  long position(RowData row);
}
