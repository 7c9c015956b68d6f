package org.spatialingest.sink.distribution;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.spatialingest.sizing.SizingBounds;

/**
 * The {@link RangeCoordinator}'s view of all subtasks' rows: per table and partition the merged
 * quantiles of the sort keys and the byte rate (smoothed, with the range count it asks for, as
 * {@link PartitionLoad} keeps it), and per table the quantiles of all its keys. {@link #merge}
 * folds one round of {@link SubtaskReport}s in; {@link #ranges} is what every subtask then uses.
 * Not thread-safe: the coordinator calls it from its one thread.
 */
final class RangeStatistics {
  /**
   * Share of the rows behind the previous quantiles that the next merge still counts: boundaries
   * follow a change of where rows are within about ten rounds, and do not swing with one round.
   */
  static final double CARRY = 0.9;

  private final SizingBounds bounds;
  private final int writers;
  private final int maxOpenPartitions;
  private double encodedPerBufferedByte;
  private final List<TableStatistics> tables = new ArrayList<>();

  /**
   * One table: the quantiles of all its keys in the last round that had any, and its partitions.
   */
  static final class TableStatistics {
    long[] quantiles = new long[0];
    double weight;
    final Map<String, PartitionStatistics> partitions = new TreeMap<>();
  }

  /** One partition: its load and the quantiles of its keys in the last round that had any. */
  static final class PartitionStatistics {
    final PartitionLoad load;
    long[] quantiles;
    double weight;

    /** the boundaries sent for {@code load.ranges}; kept while they still cut fair shares */
    long[] boundaries;

    /**
     * The most ranges it may have, 0 for no bound: a bounded input's partition asks for no more
     * than its whole input fills ({@link StartingStatistics}), however fast the files are read. A
     * file source reads a backfill in seconds, and its rate per L then asked for the finest split,
     * so a partition of a few files' worth went back to every writer ({@link
     * RangeCount#writersFor}) after the first checkpoints.
     */
    int maxRanges;

    PartitionStatistics(PartitionLoad load, long[] quantiles, double weight, long[] boundaries) {
      this.load = load;
      this.quantiles = quantiles;
      this.weight = weight;
      this.boundaries = boundaries;
    }

    /**
     * Recuts the boundaries for {@code ranges} when the count changed or the current ones give a
     * writer's block of ranges a share off by more than {@link #UNFAIR} from the mean: moving a cut
     * between two writers' blocks moves rows of one area to another writer, whose open file then
     * spans both (two generations of boundaries in one file), so such a cut moves only when the
     * load needs it. A new count with the same blocks keeps the cuts between blocks.
     */
    void recut(int ranges, int writers) {
      if (boundaries != null
          && boundaries.length == ranges - 1
          && fair(boundaries, ranges, writers)) {
        return;
      }
      if (boundaries != null
          && boundaries.length > 0
          && fair(boundaries, boundaries.length + 1, writers)) {
        long[] within =
            Quantiles.recutWithin(quantiles, boundaries, boundaries.length + 1, ranges, writers);
        if (within != null) {
          boundaries = within;
          return;
        }
      }
      boundaries = Quantiles.cut(quantiles, ranges, writers);
    }

    /**
     * Whether no writer's block of {@code current} holds more than {@link #UNFAIR} times the mean
     * share (a block may hold less: a cut moved into the gap between two areas leaves one writer a
     * small area, which is no load problem).
     */
    private boolean fair(long[] current, int ranges, int writers) {
      if (quantiles.length == 0) {
        return true;
      }
      long[] cuts = Quantiles.blockCuts(current, ranges, writers);
      int blocks = cuts.length + 1;
      int[] counts = new int[blocks];
      for (long q : quantiles) {
        counts[KeySample.rangeOf(cuts, q)]++;
      }
      double mean = quantiles.length / (double) blocks;
      for (int c : counts) {
        if (c > mean * UNFAIR) {
          return false;
        }
      }
      return true;
    }
  }

  /** How far from the mean a writer's share of the rows may drift before its cuts move. */
  static final double UNFAIR = 2;

  RangeStatistics(
      SizingBounds bounds, int writers, int maxOpenPartitions, double encodedPerBufferedByte) {
    this.bounds = bounds;
    this.writers = writers;
    this.maxOpenPartitions = maxOpenPartitions;
    this.encodedPerBufferedByte = encodedPerBufferedByte;
  }

  double encodedPerBufferedByte() {
    return encodedPerBufferedByte;
  }

  void encodedPerBufferedByte(double ratio) {
    this.encodedPerBufferedByte = ratio;
  }

  List<TableStatistics> tables() {
    return tables;
  }

  /** Whether any round brought keys: before that there is nothing to cut. */
  boolean hasKeys() {
    return tables.stream().anyMatch(t -> t.quantiles.length > 0);
  }

  RangeCount rangeCount() {
    return RangeCount.of(bounds, encodedPerBufferedByte, writers, maxOpenPartitions);
  }

  /** Folds one round's reports in; {@code nowMillis} tells how old the newest rows are. */
  void merge(Collection<SubtaskReport> reports, long nowMillis) {
    for (SubtaskReport r : reports) {
      if (r.encodedPerBufferedByte() > 0) {
        encodedPerBufferedByte = r.encodedPerBufferedByte();
      }
      while (tables.size() < r.tables().size()) {
        tables.add(new TableStatistics());
      }
    }
    RangeCount count = rangeCount();
    // a subtask's rows over the time they came in: one whose first row came late (a slow start,
    // a source assigned late) counts at its rate, not at the few rows it had time for
    double meanSeconds =
        reports.stream()
            .filter(r -> r.seconds() > 0)
            .mapToDouble(SubtaskReport::seconds)
            .average()
            .orElse(1);
    for (int t = 0; t < tables.size(); t++) {
      TableStatistics table = tables.get(t);
      Map<String, Merging> merging = new HashMap<>();
      List<long[]> tableKeys = new ArrayList<>();
      List<Double> tableWeights = new ArrayList<>();
      for (SubtaskReport r : reports) {
        if (t >= r.tables().size()) {
          continue;
        }
        for (SubtaskReport.PartitionSample p : r.tables().get(t)) {
          Merging m = merging.computeIfAbsent(p.partition(), k -> new Merging());
          m.rows += p.rows();
          m.bytesPerSecond += p.bytes() / Math.max(1e-3, r.seconds());
          m.newest = Math.max(m.newest, p.newestIngestMillis());
          if (p.keys().length > 0) {
            // the early round weighs every subtask's sample alike: its rows come from the first
            // second after a start, when the sources' speeds differ by 2x and more (start-up, not
            // data; weighed by rate, one keyed area took three writers' blocks and two shared
            // one); the checkpoint rounds weigh by rate and recut a block whose share passes 2x
            double weight =
                r.round() == 0
                    ? 1.0 / p.keys().length
                    : p.rows()
                        / (double) p.keys().length
                        * meanSeconds
                        / Math.max(1e-3, r.seconds() > 0 ? r.seconds() : meanSeconds);
            m.keys.add(p.keys());
            m.weights.add(weight);
            tableKeys.add(p.keys());
            tableWeights.add(weight);
          }
        }
      }
      for (Map.Entry<String, Merging> e : merging.entrySet()) {
        Merging m = e.getValue();
        PartitionStatistics p =
            table.partitions.computeIfAbsent(
                e.getKey(),
                k -> new PartitionStatistics(new PartitionLoad(0), new long[0], 0, null));
        p.load.add(0, m.newest);
        double rate = p.load.closeWindow(m.bytesPerSecond, m.rows == 0);
        int wanted = count.ranges(rate, p.load.newestAgeMillis(nowMillis));
        p.load.propose(p.maxRanges > 0 ? Math.min(p.maxRanges, wanted) : wanted);
        if (!m.keys.isEmpty()) {
          p.weight = carry(p.quantiles, p.weight, m.keys, m.weights) + m.rows;
          p.quantiles = Quantiles.of(m.keys, m.weights);
        }
        p.recut(Math.min(p.load.ranges, count.finest()), writers);
      }
      for (Iterator<Map.Entry<String, PartitionStatistics>> it =
              table.partitions.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<String, PartitionStatistics> e = it.next();
        if (!merging.containsKey(e.getKey())) {
          e.getValue().load.closeWindow(0, true);
          if (e.getValue().load.idle()) {
            it.remove();
          }
        }
      }
      if (!tableKeys.isEmpty()) {
        long rows = merging.values().stream().mapToLong(m -> m.rows).sum();
        table.weight = carry(table.quantiles, table.weight, tableKeys, tableWeights) + rows;
        table.quantiles = Quantiles.of(tableKeys, tableWeights);
      }
    }
  }

  /**
   * Adds the previous quantiles, standing for {@code weight} rows decayed by {@link #CARRY}, to a
   * round's samples; returns the weight carried. A round's mix of subtasks is uneven (one is ahead,
   * one has caught up), so boundaries from one round alone would swing with it.
   */
  private static double carry(
      long[] previous, double weight, List<long[]> keys, List<Double> weights) {
    if (previous.length == 0 || weight <= 0) {
      return 0;
    }
    double carried = weight * CARRY;
    keys.add(previous);
    weights.add(carried / previous.length);
    return carried;
  }

  /** The ranges every subtask uses: counts capped by the current writers' finest split. */
  GlobalRanges ranges(long round) {
    int finest = rangeCount().finest();
    List<GlobalRanges.TableRanges> out = new ArrayList<>(tables.size());
    for (TableStatistics table : tables) {
      Map<String, GlobalRanges.PartitionRanges> partitions = new HashMap<>();
      table.partitions.forEach(
          (path, p) -> {
            int ranges = Math.min(p.load.ranges, finest);
            p.recut(ranges, writers);
            partitions.put(path, new GlobalRanges.PartitionRanges(ranges, p.boundaries));
          });
      out.add(new GlobalRanges.TableRanges(table.quantiles, partitions));
    }
    return new GlobalRanges(round, finest, out);
  }

  private static final class Merging {
    long rows;
    double bytesPerSecond;
    long newest = Long.MIN_VALUE;
    final List<long[]> keys = new ArrayList<>();
    final List<Double> weights = new ArrayList<>();
  }
}
