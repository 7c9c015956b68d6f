package org.spatialingest.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * When a table is query-ready (issue #24): every expected row is committed, in data files whose
 * median size is at least half the target file size T. How compact the files are in space is
 * measured separately, by the reader's query set ({@link ReaderCost}).
 */
final class QueryReady {
  /** What the current snapshot holds. */
  record Look(long rows, int files, long p50FileBytes) {
    boolean ready(long expectedRows, long targetBytes) {
      return rows >= expectedRows && files > 0 && p50FileBytes * 2 >= targetBytes;
    }
  }

  private QueryReady() {}

  /** Rows, data files and their median size in {@code table}'s current snapshot (refreshed). */
  static Look look(Table table) {
    table.refresh();
    if (table.currentSnapshot() == null) {
      return new Look(0, 0, 0);
    }
    List<Long> sizes = new ArrayList<>();
    long rows = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask t : tasks) {
        sizes.add(t.file().fileSizeInBytes());
        rows += t.file().recordCount();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    sizes.sort(null);
    return new Look(rows, sizes.size(), Percentiles.of(sizes, 50));
  }
}
