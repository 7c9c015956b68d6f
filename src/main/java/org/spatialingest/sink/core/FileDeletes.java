package org.spatialingest.sink.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the sink's own files (staging runs once their rows are committed, orphans): in batches
 * through {@link SupportsBulkOperations} where the table's {@code FileIO} has it ({@code S3FileIO}
 * sends one {@code DeleteObjects} request per 1,000 keys, where one call a file would be 16,384
 * sequential requests for a commit of 1,024 writers), else one call a file.
 *
 * <p>{@link #deleteLater} runs on one background thread, so a commit never waits for the deletes of
 * the commit before it. A delete that fails, or never runs because the job stopped first, leaves a
 * file no state references: the orphan clean-up of a later start removes it. Failures are logged,
 * never thrown: the rows are committed either way.
 */
@Internal
public final class FileDeletes implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FileDeletes.class);

  /** How long {@link #close} waits for queued deletes. */
  private static final long CLOSE_WAIT_SECONDS = 10;

  private final ExecutorService executor =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "spatial-sink-deletes");
            t.setDaemon(true);
            return t;
          });
  private final AtomicLong queued = new AtomicLong();

  /** Queues the delete of {@code paths} through {@code io}; returns at once. */
  public void deleteLater(FileIO io, Collection<String> paths) {
    if (paths.isEmpty()) {
      return;
    }
    List<String> copy = List.copyOf(paths);
    queued.addAndGet(copy.size());
    executor.execute(
        () -> {
          try {
            deleteNow(io, copy);
          } finally {
            queued.addAndGet(-copy.size());
          }
        });
  }

  /** Files queued and not deleted yet. */
  public long queued() {
    return queued.get();
  }

  /**
   * Deletes {@code paths} through {@code io} now, in batches where it can; returns how many are
   * gone (a missing file counts as gone).
   */
  public static int deleteNow(FileIO io, Collection<String> paths) {
    if (paths.isEmpty()) {
      return 0;
    }
    if (io instanceof SupportsBulkOperations bulk) {
      try {
        bulk.deleteFiles(paths);
        return paths.size();
      } catch (BulkDeletionFailureException e) {
        LOG.warn(
            "{} of {} files were not deleted; a later start's clean-up removes them",
            e.numberFailedObjects(),
            paths.size(),
            e);
        return paths.size() - e.numberFailedObjects();
      } catch (RuntimeException e) {
        LOG.warn(
            "deleting {} files failed; a later start's clean-up removes them", paths.size(), e);
        return 0;
      }
    }
    List<String> failed = new ArrayList<>();
    for (String path : paths) {
      try {
        io.deleteFile(path);
      } catch (RuntimeException e) {
        failed.add(path);
        LOG.debug("deleting {} failed", path, e);
      }
    }
    if (!failed.isEmpty()) {
      LOG.warn(
          "{} of {} files were not deleted (first: {}); a later start's clean-up removes them",
          failed.size(),
          paths.size(),
          failed.get(0));
    }
    return paths.size() - failed.size();
  }

  /** Waits up to 10 s for queued deletes, then lets the rest go (a later clean-up's). */
  @Override
  public void close() throws InterruptedException {
    executor.shutdown();
    if (!executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
      LOG.info("{} queued file deletes left to a later start's clean-up", queued.get());
      executor.shutdownNow();
    }
  }
}
