package org.spatialingest.sink.distribution;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A uniform sample of the sort keys one subtask routed into one partition since its last report to
 * the {@link RangeCoordinator} (reservoir sampling: every row equally likely to be in it), with the
 * rows and the (sampled) bytes they brought.
 */
final class KeyReservoir {
  /** Keys per partition and report: 2 KB; the coordinator weighs them by the rows behind them. */
  static final int SIZE = 256;

  private final long[] keys = new long[SIZE];
  private long rows;
  private long bytes;
  private long newestIngestMillis = Long.MIN_VALUE;

  void add(long key, SplittableRandom random) {
    if (rows < SIZE) {
      keys[(int) rows] = key;
    } else {
      long slot = random.nextLong(rows + 1);
      if (slot < SIZE) {
        keys[(int) slot] = key;
      }
    }
    rows++;
  }

  void addBytes(long measured, long ingestMillis) {
    bytes += measured;
    newestIngestMillis = Math.max(newestIngestMillis, ingestMillis);
  }

  boolean isEmpty() {
    return rows == 0;
  }

  /** What it holds, as one partition of a report; then starts over. */
  SubtaskReport.PartitionSample drain(String partition) {
    SubtaskReport.PartitionSample sample =
        new SubtaskReport.PartitionSample(
            partition,
            rows,
            bytes,
            newestIngestMillis,
            Arrays.copyOf(keys, (int) Math.min(rows, SIZE)));
    rows = 0;
    bytes = 0;
    newestIngestMillis = Long.MIN_VALUE;
    return sample;
  }
}
