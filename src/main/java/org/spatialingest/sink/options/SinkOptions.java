package org.spatialingest.sink.options;

import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/**
 * Every option of the sink's builder with its key and default, as Flink's connectors declare theirs
 * ({@link ConfigOption}): the one owner of both. The builder starts from these defaults; messages
 * of the sink name an option by its key; an application that maps its configuration onto the
 * builder takes the keys and defaults from here. A minor version may add options and change a
 * default (named in the release notes); it does not rename a key.
 */
@PublicEvolving
public final class SinkOptions {
  /** How rows reach the writers. */
  public static final ConfigOption<DistributionMode> DISTRIBUTION =
      ConfigOptions.key("sink.distribution")
          .enumType(DistributionMode.class)
          .defaultValue(DistributionMode.RANGE);

  /** When files close. */
  public static final ConfigOption<ClosePolicyKind> CLOSE_POLICY =
      ConfigOptions.key("sink.close-policy")
          .enumType(ClosePolicyKind.class)
          .defaultValue(ClosePolicyKind.BOUNDED);

  /** The freshness bound L: every row is in a file closed at a checkpoint within L + C. */
  public static final ConfigOption<Duration> MAX_LATENCY =
      ConfigOptions.key("sink.max-latency").durationType().defaultValue(Duration.ofSeconds(120));

  /** Partition buffers per writer held in memory; past it the least recently written is parked. */
  public static final ConfigOption<Integer> MAX_OPEN_PARTITIONS =
      ConfigOptions.key("sink.max-open-partitions").intType().defaultValue(32);

  /** Parked buffers per writer; past it the least recently written parked buffer closes. */
  public static final ConfigOption<Integer> MAX_PARKED_PARTITIONS =
      ConfigOptions.key("sink.max-parked-partitions").intType().defaultValue(1024);

  /** Parquet row groups per file of T, each with its own column statistics. */
  public static final ConfigOption<Integer> ROW_GROUPS_PER_FILE =
      ConfigOptions.key("sink.row-groups-per-file").intType().defaultValue(8);

  private SinkOptions() {}
}
