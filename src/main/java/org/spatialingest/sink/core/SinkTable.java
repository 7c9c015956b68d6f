package org.spatialingest.sink.core;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.table.TableLayout;

/**
 * One table a sink writes: how to load it and what its rows look like.
 *
 * @param seedRatio Parquet bytes per buffered byte its writers start from when the table has no
 *     commit of the sink to learn it from (measured on a sample of a bounded input); 0: none, they
 *     start from 1
 */
@Internal
public record SinkTable(TableLoader loader, TableLayout layout, double seedRatio)
    implements Serializable {

  /** A table whose writers start from its last commit's ratio, or 1. */
  public SinkTable(TableLoader loader, TableLayout layout) {
    this(loader, layout, 0);
  }
}
