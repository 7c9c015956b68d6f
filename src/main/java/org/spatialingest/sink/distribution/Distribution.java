package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sink.options.SinkOptions;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableLayout;

/**
 * The exchange in front of the sink's writers ({@code sink.distribution}), as Iceberg's own sink
 * offers with its distribution modes, fitted to this table: {@code range} sends each row to a
 * writer by its time partition and the Hilbert-key range it falls in ({@link WriterAssigner}), so
 * files per commit follow bytes / T rather than the writer count, and each file covers a compact
 * part of the map (its bbox statistics let a spatial filter skip it); {@code hash} by time
 * partition only; {@code none} adds no exchange (each writer writes every partition it is sent).
 *
 * <p>Use: {@code builder(router).table(...)...build().apply(stream)}, then give the sink {@link
 * TableRouter#batched} and {@link #writers()} as its parallelism.
 *
 * @param <T> the sink's input elements
 */
public final class Distribution<T> {
  private static final Logger LOG = LoggerFactory.getLogger(Distribution.class);
  private final Builder<T> settings;

  /** the range coordinators' {@link StartingStatistics}, or null */
  private final byte[] startingStatistics;

  private Distribution(Builder<T> b, byte[] startingStatistics) {
    this.settings = b;
    this.startingStatistics = startingStatistics;
  }

  public static <T> Builder<T> builder(TableRouter<T> router) {
    return new Builder<>(router);
  }

  /** Writer subtasks the sink must run with (the exchange places rows on exactly these). */
  public int writers() {
    return settings.writers;
  }

  /**
   * The placement step (same parallelism as {@code input}, chained to it) and the exchange by the
   * slot it chose; the sink that reads the result must run with {@link #writers()} subtasks.
   */
  public DataStream<RowBatch> apply(DataStream<T> input) {
    return apply(List.of(input));
  }

  /**
   * As {@link #apply(DataStream)} for several inputs of the sink (e.g. rows and rejects from one
   * transform): each gets its own placement step, chained to its operator (a union in front of one
   * step would cost a network hop), uid {@code <uid>} for the first and {@code <uid>-<i>} for the
   * others.
   */
  public DataStream<RowBatch> apply(List<DataStream<T>> inputs) {
    DataStream<RowBatch> placed = null;
    for (int i = 0; i < inputs.size(); i++) {
      DataStream<T> input = inputs.get(i);
      WriterAssigner.Settings<T> assigner =
          new WriterAssigner.Settings<>(
              settings.router,
              settings.tables,
              settings.mode,
              settings.bounds,
              settings.writers,
              settings.maxOpenPartitions,
              settings.encodedPerBufferedByte,
              settings.rangedTable,
              input.getType());
      SingleOutputStreamOperator<RowBatch> step =
          input
              .transform(
                  "distribute (" + settings.mode.name().toLowerCase(Locale.ROOT) + ")",
                  RowBatch.TYPE,
                  new WriterAssignerFactory<>(assigner, startingStatistics))
              .uid(i == 0 ? settings.uid : settings.uid + "-" + i)
              .setParallelism(input.getParallelism());
      placed = placed == null ? step : placed.union(step);
    }
    return placed.partitionCustom(new SlotPartitioner(), new AssignedSlot());
  }

  /** Writer = slot modulo the writer count. */
  static final class SlotPartitioner implements Partitioner<Integer> {
    @Override
    public int partition(Integer slot, int writers) {
      return Math.floorMod(slot, writers);
    }
  }

  /** The slot {@link WriterAssigner} chose. */
  static final class AssignedSlot implements KeySelector<RowBatch, Integer> {
    @Override
    public Integer getKey(RowBatch placed) {
      return placed.slot();
    }
  }

  /**
   * Builder: tables in the sink's order, the mode, the bounds the writers close files by, the
   * writer count.
   */
  public static final class Builder<T> {
    private final TableRouter<T> router;
    private final List<TablePlacement.Table> tables = new ArrayList<>();
    private DistributionMode mode = DistributionMode.RANGE;
    private SizingBounds bounds;
    private int maxOpenPartitions = SinkOptions.MAX_OPEN_PARTITIONS.defaultValue();
    private int writers;
    private double encodedPerBufferedByte;
    private TableLoader rangedTable;
    private String uid = "spatial-sink-distribution";
    private List<? extends RowData> sampledRows = List.of();
    private double rowsPerSampledRow;

    private Builder(TableRouter<T> router) {
      this.router = router;
    }

    /**
     * Adds the next table of the sink (loaded once here, for its partition spec). {@code ranged}:
     * split its partitions by sort-key range (the telemetry table; rejects are few and go by
     * partition). The ranged table's commits tell the Parquet/buffered byte ratio the range count
     * assumes (none until it has one: see {@link RangeCount#UNKNOWN_RATIO}).
     */
    public Builder<T> table(TableLoader loader, TableLayout layout, boolean ranged) {
      try (TableLoader opened = loader.clone()) {
        opened.open();
        Table table = opened.loadTable();
        tables.add(
            new TablePlacement.Table(
                layout, table.spec(), layout.writeSchema(table.schema()), ranged));
        if (ranged && rangedTable == null) {
          rangedTable = loader;
          if (table.currentSnapshot() != null) {
            encodedPerBufferedByte =
                SnapshotSummaryKeys.encodedPerBufferedByte(table.currentSnapshot().summary());
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("loading table " + loader + " for the distribution step", e);
      }
      return this;
    }

    public Builder<T> mode(DistributionMode mode) {
      this.mode = mode;
      return this;
    }

    /**
     * M, T and L of the writers, and their open-buffer limit: what one key range must fill and may
     * hold.
     */
    public Builder<T> bounds(SizingBounds bounds, int maxOpenPartitions) {
      this.bounds = bounds;
      this.maxOpenPartitions = maxOpenPartitions;
      return this;
    }

    public Builder<T> writers(int writers) {
      this.writers = writers;
      return this;
    }

    /**
     * A sample of a bounded input's rows of the ranged table (as the transform makes them), each
     * standing for {@code rowsPerSampledRow} rows of the input: with {@code range}, the coordinator
     * starts from their boundaries ({@link StartingStatistics}) instead of holding the first rows
     * for an early merge.
     */
    public Builder<T> startingSample(List<? extends RowData> rows, double rowsPerSampledRow) {
      this.sampledRows = rows;
      this.rowsPerSampledRow = rowsPerSampledRow;
      return this;
    }

    /** Uid of the placement operator; keep it stable across upgrades. */
    public Builder<T> uid(String uid) {
      this.uid = uid;
      return this;
    }

    public Distribution<T> build() {
      if (tables.isEmpty() || bounds == null || writers <= 0 || mode == DistributionMode.NONE) {
        throw new IllegalStateException(
            "a distribution needs its tables, the sink bounds, writers > 0 and a mode "
                + "other than none (none is no exchange at all)");
      }
      byte[] starting = null;
      if (mode == DistributionMode.RANGE && !sampledRows.isEmpty()) {
        try {
          starting =
              StartingStatistics.of(
                  sampledRows,
                  rowsPerSampledRow,
                  tables,
                  bounds,
                  writers,
                  maxOpenPartitions,
                  encodedPerBufferedByte,
                  System.currentTimeMillis());
        } catch (IOException | RuntimeException e) {
          // a sample is an optimisation: without it the first rows wait for the early merge
          LOG.warn("no starting ranges from the input sample: {}", e.toString(), e);
        }
      }
      return new Distribution<>(this, starting);
    }
  }
}
