package org.spatialingest.sink.options;

import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Every option of the sink's builder with its key and default ({@link SinkOption}): the one owner
 * of both. The builder starts from these defaults; messages of the sink name an option by its key;
 * an application that maps its configuration onto the builder takes the keys and defaults from
 * here. A minor version may add options and change a default (named in the release notes); it does
 * not rename a key.
 */
@PublicEvolving
public final class SinkOptions {
  /** How rows reach the writers. */
  public static final SinkOption<DistributionMode> DISTRIBUTION =
      new SinkOption<>("sink.distribution", DistributionMode.RANGE);

  /** When files close. */
  public static final SinkOption<ClosePolicyKind> CLOSE_POLICY =
      new SinkOption<>("sink.close-policy", ClosePolicyKind.BOUNDED);

  /** The freshness bound L: every row is in a file closed at a checkpoint within L + C. */
  public static final SinkOption<Duration> MAX_LATENCY =
      new SinkOption<>("sink.max-latency", Duration.ofSeconds(120));

  /** Partition buffers per writer held in memory; past it the least recently written is parked. */
  public static final SinkOption<Integer> MAX_OPEN_PARTITIONS =
      new SinkOption<>("sink.max-open-partitions", 32);

  /** Parked buffers per writer; past it the least recently written parked buffer closes. */
  public static final SinkOption<Integer> MAX_PARKED_PARTITIONS =
      new SinkOption<>("sink.max-parked-partitions", 1024);

  /** Parquet row groups per file of T, each with its own column statistics. */
  public static final SinkOption<Integer> ROW_GROUPS_PER_FILE =
      new SinkOption<>("sink.row-groups-per-file", 8);

  private SinkOptions() {}
}
