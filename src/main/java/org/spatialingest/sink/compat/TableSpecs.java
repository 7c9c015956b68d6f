package org.spatialingest.sink.compat;

import java.io.IOException;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.sink.core.SinkTables;

/**
 * The partition specs of a sink's tables by spec id, as the tables have them when a state is read:
 * for the formats that kept a data file without its spec (only its id). Iceberg keeps every spec a
 * table ever had in its metadata (by id), and a data file's partition tuple is laid out by the spec
 * it was written with, which may no longer be the current one.
 */
@Internal
@FunctionalInterface
public interface TableSpecs extends Serializable {
  /** The specs of the sink table {@code table} (router index), by spec id. */
  Map<Integer, PartitionSpec> specsOf(int table) throws IOException;

  /**
   * Loads the specs from the tables, each at most once per instance and only when first asked for
   * (a state of a current build never asks). Cost: one table load per table asked for.
   */
  static TableSpecs loadedFrom(SinkTables tables) {
    return new Loaded(tables);
  }

  /** For serializers that never read a format without specs (the network between operators). */
  static TableSpecs none() {
    return table -> {
      throw new IOException("no tables at hand to resolve a partition spec id of table " + table);
    };
  }

  /** See {@link #loadedFrom}. */
  final class Loaded implements TableSpecs {
    private static final long serialVersionUID = 1L;

    private final SinkTables tables;
    private transient Map<Integer, Map<Integer, PartitionSpec>> loaded;

    private Loaded(SinkTables tables) {
      this.tables = tables;
    }

    @Override
    public synchronized Map<Integer, PartitionSpec> specsOf(int table) throws IOException {
      if (loaded == null) {
        loaded = new HashMap<>();
      }
      Map<Integer, PartitionSpec> specs = loaded.get(table);
      if (specs == null) {
        try (TableLoader loader = tables.get(table).loader().clone()) {
          loader.open();
          specs = Map.copyOf(loader.loadTable().specs());
        }
        loaded.put(table, specs);
      }
      return specs;
    }
  }
}
