package org.spatialingest.sink.distribution;

import java.util.List;

/**
 * What one subtask of the placement step tells the {@link RangeCoordinator}: per table (in the
 * sink's order; empty for a table that is not ranged) the partitions it routed rows into since its
 * last report.
 *
 * @param round 0 for the early report after a start, else the checkpoint id it was sent at
 * @param seconds the time its rows came in: since its last report, or since its first row
 * @param encodedPerBufferedByte the Parquet/buffered byte ratio it knows (0: unknown)
 */
record SubtaskReport(
    long round, double seconds, double encodedPerBufferedByte, List<List<PartitionSample>> tables) {

  /**
   * One partition in a report.
   *
   * @param partition the partition's path ({@code PartitionSpec.partitionToPath})
   * @param rows rows routed into it
   * @param bytes their buffered bytes, as measured on a sample of the rows and scaled up
   * @param newestIngestMillis ingest time of the newest measured row, {@code Long.MIN_VALUE} if
   *     none
   * @param keys a uniform sample of their sort keys, at most {@link KeyReservoir#SIZE}
   */
  record PartitionSample(
      String partition, long rows, long bytes, long newestIngestMillis, long[] keys) {}
}
