package org.spatialingest.sink.distribution;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.SnapshotSummaryKeys;

/**
 * The ranged table's Parquet bytes per buffered byte, as its writers' last commit recorded it
 * ({@link SnapshotSummaryKeys#encodedPerBufferedByte}): the ratio a {@link RangeCount} turns T into
 * buffered bytes with. Re-read every {@value #REFRESH_SECONDS} s on a daemon thread of its own (one
 * per placement subtask), so the task thread never waits for the catalog; a failed read, or a table
 * without a commit, keeps the previous value.
 *
 * <p>Cost: one table load every {@value #REFRESH_SECONDS} s off the task thread; {@link #ratio()}
 * is a volatile read.
 */
final class EncodedRatioReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EncodedRatioReader.class);

  /** How often the ratio is re-read. */
  static final long REFRESH_SECONDS = 10;

  private volatile double ratio;
  private final ScheduledExecutorService thread;
  private final TableLoader loader;

  private EncodedRatioReader(double seed, ScheduledExecutorService thread, TableLoader loader) {
    this.ratio = seed;
    this.thread = thread;
    this.loader = loader;
  }

  /** A ratio that stays {@code seed} (no table to read, or no ranged placement). */
  static EncodedRatioReader fixed(double seed) {
    return new EncodedRatioReader(seed, null, null);
  }

  /**
   * Starts with {@code seed} and re-reads {@code table} (a clone of it) every {@value
   * #REFRESH_SECONDS} s, the first read after that delay.
   */
  static EncodedRatioReader start(TableLoader table, double seed) {
    ScheduledExecutorService thread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "distribution-ratio-reader");
              t.setDaemon(true);
              return t;
            });
    TableLoader loader = table.clone();
    EncodedRatioReader reader = new EncodedRatioReader(seed, thread, loader);
    thread.scheduleWithFixedDelay(
        () -> reader.read(loader), REFRESH_SECONDS, REFRESH_SECONDS, TimeUnit.SECONDS);
    return reader;
  }

  /** The last ratio read (0: unknown). */
  double ratio() {
    return ratio;
  }

  private void read(TableLoader loader) {
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

  /** Stops the thread (interrupting a read in progress) and closes the table loader it read. */
  @Override
  public void close() {
    if (thread != null) {
      thread.shutdownNow();
    }
    if (loader != null) {
      try {
        thread.awaitTermination(1, TimeUnit.SECONDS); // a read in progress ends before its loader
        loader.close();
      } catch (Exception e) {
        LOG.debug("closing the ranged table's loader", e);
      }
    }
  }
}
