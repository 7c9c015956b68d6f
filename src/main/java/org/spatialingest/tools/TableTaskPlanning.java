package org.spatialingest.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.CombinedScanTask;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.io.CloseableIterable;
import org.spatialingest.sizing.ScanInput;

/**
 * The input of {@code estimate-tasks --table}: sizes and split offsets ({@link
 * DataFile#splitOffsets()}, the Parquet row-group starts) of the data files of the table's current
 * snapshot, optionally of one partition; and Iceberg's own task count for the same scan ({@code
 * table.newScan().planTasks()}).
 *
 * <p>Both plan on the calling thread ({@code planWith} a caller-runs executor). With a worker pool
 * (Iceberg's default when a snapshot has several manifests) the order in which files reach the bin
 * packing, and therefore the packing itself, can differ from run to run; on one thread it is the
 * manifest order, the same for both.
 */
public final class TableTaskPlanning {
  private TableTaskPlanning() {}

  /**
   * @param partition null for the whole table
   */
  public static ScanInput scanInput(Table table, PartitionFilter partition) {
    List<Long> sizes = new ArrayList<>();
    List<List<Long>> offsets = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = scan(table, partition).planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        sizes.add(file.fileSizeInBytes());
        offsets.add(file.splitOffsets());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ScanInput(sizes, offsets);
  }

  /**
   * Iceberg's own planner: the number of {@link CombinedScanTask}s of {@code planTasks()} with
   * these options.
   */
  public static int icebergPlannedTasks(
      Table table, PartitionFilter partition, long splitSize, int lookback, long openFileCost) {
    TableScan scan =
        scan(table, partition)
            .option(TableProperties.SPLIT_SIZE, Long.toString(splitSize))
            .option(TableProperties.SPLIT_LOOKBACK, Integer.toString(lookback))
            .option(TableProperties.SPLIT_OPEN_FILE_COST, Long.toString(openFileCost));
    int n = 0;
    try (CloseableIterable<CombinedScanTask> tasks = scan.planTasks()) {
      for (CombinedScanTask ignored : tasks) {
        n++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return n;
  }

  private static TableScan scan(Table table, PartitionFilter partition) {
    TableScan scan = table.newScan().planWith(new CallerRuns());
    return partition == null ? scan : scan.filter(partition.rowFilter(table));
  }

  /** Runs every task on the submitting thread. */
  static final class CallerRuns extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }
}
