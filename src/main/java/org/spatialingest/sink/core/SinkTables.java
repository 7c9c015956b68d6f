package org.spatialingest.sink.core;

import java.io.Serializable;
import java.util.Iterator;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * The tables one sink writes, numbered as its {@link TableRouter} numbers them: the index is what
 * rows, closed files and staging runs carry. Table {@link #PRIMARY} is the primary table: its
 * snapshots record the source positions, it is committed last (so its positions never claim a
 * record whose reject is not committed yet), it holds the sink's lease and its staging directory
 * holds the stored batches. The others (the rejects table) are secondary.
 */
@Internal
public final class SinkTables implements Serializable, Iterable<SinkTable> {
  private static final long serialVersionUID = 1L;

  /** The primary table's index. */
  public static final int PRIMARY = 0;

  private final List<SinkTable> tables;

  private SinkTables(List<SinkTable> tables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("a sink writes at least one table");
    }
    this.tables = List.copyOf(tables);
  }

  /** The tables in router order: the first is the primary table. */
  public static SinkTables of(List<SinkTable> tables) {
    return new SinkTables(tables);
  }

  public SinkTable primary() {
    return tables.get(PRIMARY);
  }

  /** The table of router index {@code index}. */
  public SinkTable get(int index) {
    return tables.get(index);
  }

  public int size() {
    return tables.size();
  }

  @Override
  public Iterator<SinkTable> iterator() {
    return tables.iterator();
  }
}
