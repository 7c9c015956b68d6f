package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.flink.RowDataWrapper;
import org.spatialingest.sink.write.BufferedRowSize;
import org.spatialingest.table.TableLayout;

/**
 * One subtask's placement of one table of the sink: its partitions ({@link PartitionPlacement}, by
 * partition key), and, if its rows are split by key range, what it samples of them and the ranges
 * each partition uses: the coordinator's for it; else the partition's own count cut from the
 * table's global quantiles; else (no merge yet) the fallback, this subtask's own last {@link
 * KeySample#SIZE} keys cut at the count its own rate asks for.
 *
 * <p>Cost per row: a partition key computation and a hash lookup; for a ranged table a key sample
 * and a reservoir step, and one row in {@link #SIZE_SAMPLING} serialized to measure its bytes. Not
 * thread-safe (the task thread).
 */
final class TablePlacement {
  /** One row in this many is serialized to measure bytes. */
  static final int SIZE_SAMPLING = 8;

  /**
   * One table of the sink: its layout, partition spec and the schema its rows are written with (the
   * table's field ids, see {@link TableLayout#writeSchema}); {@code ranged} when its rows are split
   * by key range.
   */
  record Table(TableLayout layout, PartitionSpec spec, Schema writeSchema, boolean ranged)
      implements Serializable {}

  private final int index;
  private final int writers;
  private final PartitionSpec spec;
  private final PartitionKey partitionKey;
  private final RowDataWrapper wrapper;
  private final int sortKeyField;
  private final TableLayout layout;
  private final RowBatcher batcher;

  /** this subtask's last keys, the fallback's boundaries; null when the table is not ranged */
  private final KeySample sample;

  private final BufferedRowSize size;
  private final Map<StructLike, PartitionPlacement> partitions = new HashMap<>();

  /** the coordinator's ranges of this table, null until the first merge */
  private GlobalRanges.TableRanges globalTable;

  /**
   * @param index the table's place in the sink's order
   * @param rangeMode whether the distribution splits by key range at all ({@code range})
   * @param batcher where its partitions' rows go
   */
  TablePlacement(int index, Table table, boolean rangeMode, int writers, RowBatcher batcher) {
    this.index = index;
    this.writers = writers;
    this.spec = table.spec();
    this.partitionKey = new PartitionKey(table.spec(), table.writeSchema());
    this.wrapper = new RowDataWrapper(table.layout().rowType(), table.writeSchema().asStruct());
    this.sortKeyField = table.layout().sortKeyField();
    this.layout = table.layout();
    this.batcher = batcher;
    boolean ranged = rangeMode && table.ranged() && sortKeyField >= 0;
    this.sample = ranged ? new KeySample() : null;
    this.size = ranged ? new BufferedRowSize(table.layout()) : null;
  }

  /** Whether its rows are split by key range (and sampled). */
  boolean ranged() {
    return sample != null;
  }

  /**
   * The placement of {@code row}'s partition; a partition seen for the first time is placed by
   * {@code ranges} (null before the first merge) or else by {@code count}.
   */
  PartitionPlacement partition(RowData row, GlobalRanges ranges, RangeCount count) {
    partitionKey.partition(wrapper.wrap(row));
    PartitionPlacement partition = partitions.get(partitionKey);
    if (partition == null) {
      partition =
          new PartitionPlacement(
              31 * index + partitionKey.hashCode(),
              spec.partitionToPath(partitionKey),
              sample != null,
              batcher.forPartition(index, spec.specId()));
      if (globalTable != null) {
        partition.global = globalTable.partitions().get(partition.path);
      }
      place(partition, ranges, count);
      partitions.put(partitionKey.copy(), partition);
    }
    return partition;
  }

  /** The partitions it holds, by path (for tests). */
  Map<String, PartitionPlacement> partitionsByPath() {
    Map<String, PartitionPlacement> byPath = new HashMap<>();
    partitions.values().forEach(p -> byPath.put(p.path, p));
    return byPath;
  }

  /**
   * Samples a row of a ranged table: its key into the fallback sample and the partition's
   * reservoir, and (one row in {@link #SIZE_SAMPLING}) its bytes. Returns the bytes it counted for
   * the row, scaled up by the sampling, or 0.
   */
  long sample(PartitionPlacement partition, RowData row, SplittableRandom random) {
    long key = row.getLong(sortKeyField);
    sample.add(key);
    partition.reservoir.add(key, random);
    if (random.nextInt(SIZE_SAMPLING) != 0) {
      return 0;
    }
    long bytes;
    try {
      bytes = size.measure(row) * SIZE_SAMPLING;
    } catch (IOException e) {
      throw new UncheckedIOException("measuring a row", e);
    }
    long ingest = layout.ingestMillis(row);
    partition.local.add(bytes, ingest);
    partition.reservoir.addBytes(bytes, ingest);
    return bytes;
  }

  /** The buffer id of {@code row} in {@code partition}: 0 unless the table is ranged. */
  int bufferId(PartitionPlacement partition, RowData row) {
    return sample == null ? 0 : partition.bufferId(row.getLong(sortKeyField));
  }

  /** Takes the coordinator's ranges and places every partition by them. */
  void useGlobal(GlobalRanges ranges, RangeCount count) {
    globalTable = index < ranges.tables().size() ? ranges.tables().get(index) : null;
    for (PartitionPlacement p : partitions.values()) {
      p.global = globalTable == null ? null : globalTable.partitions().get(p.path);
    }
    for (PartitionPlacement p : partitions.values()) {
      place(p, ranges, count);
    }
  }

  /**
   * Chooses the count and boundaries {@code p}'s rows are placed by: the coordinator's for it; else
   * its own count cut from the table's global quantiles; else (no merge yet) the fallback.
   */
  void place(PartitionPlacement p, GlobalRanges ranges, RangeCount count) {
    if (sample == null) {
      p.use(1, 1, new long[0]);
    } else if (p.global != null) {
      p.use(ranges.finest(), p.global.ranges(), p.global.boundaries());
    } else if (globalTable != null && globalTable.quantiles().length > 0) {
      int own = Math.min(p.local.ranges, ranges.finest());
      p.use(ranges.finest(), own, Quantiles.cut(globalTable.quantiles(), own, writers));
    } else {
      p.use(count.finest(), p.local.ranges, sample.boundaries(p.local.ranges));
    }
  }

  /**
   * Closes a window of {@code seconds} of this subtask's rows: the fallback sample is re-cut, each
   * partition's own range count follows its rate ({@code subtasks} × its own), and a partition idle
   * for {@link PartitionLoad#IDLE_WINDOWS} windows with nothing to report is forgotten, its batches
   * sent first.
   *
   * @param nowMillis the wall clock, for the age of the newest row (a backlog)
   */
  void refresh(
      double seconds, int subtasks, RangeCount count, GlobalRanges ranges, long nowMillis) {
    if (sample != null) {
      sample.refresh();
    }
    for (Iterator<PartitionPlacement> it = partitions.values().iterator(); it.hasNext(); ) {
      PartitionPlacement p = it.next();
      long newestAge = p.local.newestAgeMillis(nowMillis);
      double bytesPerSecond = p.local.closeWindow(seconds) * subtasks;
      if (p.local.idle() && (p.reservoir == null || p.reservoir.isEmpty())) {
        batcher.sendAll(p.batches);
        it.remove();
      } else if (sample != null) {
        p.local.propose(count.ranges(bytesPerSecond, newestAge));
        place(p, ranges, count);
      }
    }
  }

  /** Drains, into {@code into}, the partitions' samples since the last report. */
  void drainSamples(Consumer<SubtaskReport.PartitionSample> into) {
    if (sample == null) {
      return;
    }
    for (PartitionPlacement p : partitions.values()) {
      if (!p.reservoir.isEmpty()) {
        into.accept(p.reservoir.drain(p.path));
      }
    }
  }
}
