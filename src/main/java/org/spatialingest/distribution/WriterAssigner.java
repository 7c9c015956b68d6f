package org.spatialingest.distribution;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig.DistributionMode;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.write.BufferedRowSize;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableLayout;

/**
 * Places each element on a writer: {@code f0} a writer slot (the exchange takes it modulo the
 * writer count), {@code f1} the key range of its partition (its buffer id, see {@link
 * RangeCount#finest}), {@code f2} the element. The finest split of a partition's keys is cut into
 * one block of neighbouring ranges per writer, starting at writer {@code hash(partition)}: every
 * subtask sends a range to the same writer, a partition's ranges spread over the writers, and the
 * ranges a writer holds are adjacent in Hilbert order, so its latency close can pack their
 * remainders into one file that still covers one compact area.
 *
 * <p>Each subtask keeps its own statistics, from its own rows (no coordination; subtasks reading
 * similar data agree closely): the last {@link KeySample#SIZE} sort keys of the ranged table, and
 * per partition the bytes routed there (the sink's own {@link BufferedRowSize} measure, on a random
 * eighth of the rows). About once a second it recomputes, per partition, the range count ({@link
 * RangeCount}; its rate times the subtask count is the partition's rate) and the boundaries. The
 * Parquet/buffered byte ratio the range count assumes is the ranged table's last commit's, re-read
 * every {@value #RATIO_REFRESH_SECONDS} s on a thread of its own. Nothing is in Flink state:
 * statistics rebuild within seconds after a restart, and a range is only a file boundary — a writer
 * accepts any row.
 *
 * <p>Cost per row: a partition key computation and a hash lookup, a binary search over at most a
 * few dozen boundaries, and one serialization in eight.
 *
 * @param <T> the sink's input elements
 */
public final class WriterAssigner<T> extends RichMapFunction<T, Tuple3<Integer, Integer, T>> {
  private static final Logger LOG = LoggerFactory.getLogger(WriterAssigner.class);

  /** One row in this many is serialized to measure bytes. */
  private static final int SIZE_SAMPLING = 8;

  private static final long REFRESH_NANOS = 1_000_000_000L;

  /**
   * One table of the sink: its layout, partition spec and the schema its rows are written with (the
   * table's field ids, see {@link TableLayout#writeSchema}); {@code ranged} when its rows are split
   * by key range.
   */
  record Placement(TableLayout layout, PartitionSpec spec, Schema writeSchema, boolean ranged)
      implements Serializable {}

  /** How often the Parquet/buffered byte ratio is re-read from the ranged table's last commit. */
  private static final long RATIO_REFRESH_SECONDS = 10;

  private final TableRouter<T> router;
  private final List<Placement> placements;
  private final DistributionMode mode;
  private final SizingBounds bounds;
  private final int writers;
  private final int maxOpenPartitions;
  private final double seedRatio;

  /** the ranged table, to follow the ratio its writers learn; null when nothing is ranged */
  private final TableLoader ratioSource;

  private transient List<TablePlacement> tables;
  private transient Tuple3<Integer, Integer, T> out;
  private transient SplittableRandom random;
  private transient int subtasks;
  private transient long rows;
  private transient long windowStart;
  private transient boolean refreshed;
  private transient RangeCount rangeCount;
  private transient volatile double ratio;
  private transient ScheduledExecutorService ratioReader;

  /**
   * @param seedRatio Parquet bytes per buffered byte of the ranged table's last commit when the job
   *     was built, or 0
   * @param ratioSource the ranged table, re-read every {@value #RATIO_REFRESH_SECONDS} s for the
   *     ratio its writers learn (off the task thread), or {@code null}
   */
  WriterAssigner(
      TableRouter<T> router,
      List<Placement> placements,
      DistributionMode mode,
      SizingBounds bounds,
      int writers,
      int maxOpenPartitions,
      double seedRatio,
      TableLoader ratioSource) {
    this.router = router;
    this.placements = List.copyOf(placements);
    this.mode = mode;
    this.bounds = bounds;
    this.writers = writers;
    this.maxOpenPartitions = maxOpenPartitions;
    this.seedRatio = seedRatio;
    this.ratioSource = ratioSource;
  }

  @Override
  public void open(OpenContext context) {
    subtasks = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
    tables = new ArrayList<>(placements.size());
    for (int i = 0; i < placements.size(); i++) {
      tables.add(new TablePlacement(i, placements.get(i), mode == DistributionMode.RANGE));
    }
    out = new Tuple3<>();
    random = new SplittableRandom(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
    ratio = seedRatio;
    rangeCount = RangeCount.of(bounds, ratio, writers, maxOpenPartitions);
    if (ratioSource != null && mode == DistributionMode.RANGE) {
      ratioReader =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "distribution-ratio-reader");
                t.setDaemon(true);
                return t;
              });
      TableLoader loader = ratioSource.clone();
      ratioReader.scheduleWithFixedDelay(
          () -> readRatio(loader), RATIO_REFRESH_SECONDS, RATIO_REFRESH_SECONDS, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() {
    if (ratioReader != null) {
      ratioReader.shutdownNow();
    }
  }

  /**
   * The writers' encoded/buffered ratio, as their last commit recorded it; a failed read keeps the
   * previous one.
   */
  private void readRatio(TableLoader loader) {
    try {
      if (!loader.isOpen()) {
        loader.open();
      }
      Table table = loader.loadTable();
      Snapshot current = table.currentSnapshot();
      double read =
          current == null ? 0 : SnapshotSummaryKeys.encodedPerBufferedByte(current.summary());
      if (read > 0) {
        ratio = read;
      }
    } catch (RuntimeException e) {
      LOG.debug("reading the encoded/buffered ratio of the ranged table", e);
    }
  }

  @Override
  public Tuple3<Integer, Integer, T> map(T element) {
    if (rows == 0) {
      windowStart =
          System.nanoTime(); // the first window starts with the data, not when the operator opened
    }
    TablePlacement table = tables.get(router.table(element));
    RowData row = router.row(element);
    PartitionLoad load = table.load(row);
    int range = 0;
    if (table.sample != null) {
      long key = row.getLong(table.sortKeyField);
      table.sample.add(key);
      range = KeySample.rangeOf(load.boundaries, key);
      if (random.nextInt(SIZE_SAMPLING) == 0) {
        load.add(table.measure(row) * SIZE_SAMPLING, table.layout.ingestMillis(row));
      }
    }
    if ((++rows & 255) == 0) {
      refreshIfDue();
    }
    int finest = rangeCount.finest();
    // the buffer id: stable when the count halves or doubles
    int bufferId = range * (finest / load.ranges);
    out.f0 = load.base + (int) ((long) bufferId * writers / finest);
    out.f1 = bufferId;
    out.f2 = element;
    return out;
  }

  /**
   * Called every 256 rows: the first refresh comes at once (a sample of 256 keys already places
   * rows far better than one range, and a backlog needs its ranges from the start), the next ones
   * once a second.
   */
  private void refreshIfDue() {
    long now = System.nanoTime();
    if (refreshed && now - windowStart < REFRESH_NANOS) {
      return;
    }
    double seconds = (now - windowStart) / 1e9;
    windowStart = now;
    refreshed = true;
    if (ratio != rangeCount.encodedPerBufferedByte()) {
      rangeCount = RangeCount.of(bounds, ratio, writers, maxOpenPartitions);
    }
    for (TablePlacement table : tables) {
      table.refresh(seconds, subtasks, rangeCount);
    }
  }

  /** The per-subtask state of one table: partition keys, loads and (if ranged) the key sample. */
  private static final class TablePlacement {
    final int index;
    final PartitionKey partitionKey;
    final RowDataWrapper wrapper;
    final int sortKeyField;
    final TableLayout layout;
    final KeySample sample;
    final BufferedRowSize size;
    final Map<StructLike, PartitionLoad> loads = new HashMap<>();

    TablePlacement(int index, Placement p, boolean rangeMode) {
      this.index = index;
      this.partitionKey = new PartitionKey(p.spec(), p.writeSchema());
      this.wrapper = new RowDataWrapper(p.layout().rowType(), p.writeSchema().asStruct());
      this.sortKeyField = p.layout().sortKeyField();
      this.layout = p.layout();
      boolean ranged = rangeMode && p.ranged() && sortKeyField >= 0;
      this.sample = ranged ? new KeySample() : null;
      this.size = ranged ? new BufferedRowSize(p.layout()) : null;
    }

    PartitionLoad load(RowData row) {
      partitionKey.partition(wrapper.wrap(row));
      PartitionLoad load = loads.get(partitionKey);
      if (load == null) {
        load = new PartitionLoad(31 * index + partitionKey.hashCode());
        loads.put(partitionKey.copy(), load);
      }
      return load;
    }

    long measure(RowData row) {
      try {
        return size.measure(row);
      } catch (IOException e) {
        throw new UncheckedIOException("measuring a row", e);
      }
    }

    void refresh(double seconds, int subtasks, RangeCount rangeCount) {
      if (sample != null) {
        sample.refresh();
      }
      long now = System.currentTimeMillis();
      for (Iterator<PartitionLoad> it = loads.values().iterator(); it.hasNext(); ) {
        PartitionLoad load = it.next();
        long newestAge = load.newestAgeMillis(now);
        double bytesPerSecond = load.closeWindow(seconds) * subtasks;
        if (load.idle()) {
          it.remove();
        } else if (sample != null) {
          load.propose(rangeCount.ranges(bytesPerSecond, newestAge));
          load.boundaries = sample.boundaries(load.ranges);
        }
      }
    }
  }
}
