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

  /**
   * Whether the sink's committer expires its tables' snapshots after its commits ({@link
   * SnapshotExpiry}); an application that runs another maintenance turns it off.
   */
  public static final SinkOption<Boolean> EXPIRE_SNAPSHOTS =
      new SinkOption<>("maintenance.expire-snapshots.enabled", true);

  /** Snapshots older than this are expired; how old a state the job can be restored from. */
  public static final SinkOption<Duration> EXPIRE_MAX_AGE =
      new SinkOption<>("maintenance.expire-snapshots.max-age", Duration.ofHours(24));

  /** Snapshots never expired, however old. */
  public static final SinkOption<Integer> EXPIRE_RETAIN_LAST =
      new SinkOption<>("maintenance.expire-snapshots.retain-last", 10);

  /** Commits to a table between two expiries of it. */
  public static final SinkOption<Integer> EXPIRE_EVERY_COMMITS =
      new SinkOption<>("maintenance.expire-snapshots.every-commits", 100);

  private SinkOptions() {}
}
