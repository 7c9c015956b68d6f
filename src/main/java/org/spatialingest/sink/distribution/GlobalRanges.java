package org.spatialingest.sink.distribution;

import java.util.List;
import java.util.Map;

/**
 * The boundaries the {@link RangeCoordinator} sends to every subtask of the placement step, per
 * table in the sink's order.
 *
 * @param round the merge they came from (0: the early merge after a start, else a checkpoint id)
 * @param finest the finest split the counts are powers of two of ({@link RangeCount#finest})
 */
record GlobalRanges(long round, int finest, List<TableRanges> tables) {

  /**
   * One table's ranges.
   *
   * @param quantiles the quantiles of all its keys, cut for a partition the merge did not see yet
   * @param partitions per partition path, its range count and boundaries
   */
  record TableRanges(long[] quantiles, Map<String, PartitionRanges> partitions) {}

  /** One partition's range count (a power of two up to {@code finest}) and its boundaries. */
  record PartitionRanges(int ranges, long[] boundaries) {}
}
