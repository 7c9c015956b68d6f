package org.spatialingest.sink;

import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.iceberg.DataFile;

/**
 * Writes a writer subtask's data files on a thread of its own, so the task thread goes on reading
 * while a closed buffer is sorted, encoded and uploaded. At most {@code maxInFlight} files are
 * queued or being written; a writer that needs to hand over another, or must see its files written
 * (at a barrier, at end of input, to free memory), waits in Flink's mailbox ({@link
 * MailboxExecutor#yield}), so a slow encoder backpressures the source as a slow task thread would.
 * What happens after a file is written runs on the task thread, as mailbox mail.
 *
 * <p>Cost: one thread per writer subtask; the buffers handed over stay in memory (and count against
 * the memory budget) until their file is written.
 */
final class FileEncoder implements AutoCloseable {

  /** Writes one data file (runs on the encoder thread; reads only buffers no longer written to). */
  @FunctionalInterface
  interface Encode {
    DataFile write() throws IOException;
  }

  /** What to do with a written file (runs on the task thread). */
  @FunctionalInterface
  interface Written {
    void accept(DataFile file, long writeNanos) throws IOException;
  }

  private final MailboxExecutor mailbox;
  private final ExecutorService thread;
  private final int maxInFlight;

  /** files handed over and not yet completed on the task thread (task thread only) */
  private int inFlight;

  /** until {@link #start()}: encode on the calling thread (while the writer restores) */
  private boolean started;

  FileEncoder(MailboxExecutor mailbox, String threadName, int maxInFlight) {
    this.mailbox = mailbox;
    this.maxInFlight = maxInFlight;
    this.thread =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
  }

  /** From now on files are written on the encoder thread. */
  void start() {
    started = true;
  }

  /**
   * Hands {@code encode} to the encoder thread, first waiting until fewer than {@code maxInFlight}
   * files are in flight; {@code written} runs on the task thread once the file is written.
   */
  void submit(Encode encode, Written written) throws IOException {
    if (!started) {
      long start = System.nanoTime();
      DataFile file = encode.write();
      written.accept(file, System.nanoTime() - start);
      return;
    }
    awaitBelow(maxInFlight);
    inFlight++;
    thread.execute(
        () -> {
          long start = System.nanoTime();
          DataFile file = null;
          Throwable failure = null;
          try {
            file = encode.write();
          } catch (Throwable t) {
            failure = t;
          }
          long nanos = System.nanoTime() - start;
          DataFile result = file;
          Throwable error = failure;
          try {
            mailbox.execute(
                () -> {
                  inFlight--;
                  if (error != null) {
                    throw new IOException("Writing a data file failed", error);
                  }
                  written.accept(result, nanos);
                },
                "data file written");
          } catch (RejectedExecutionException closing) {
            // the task is shutting down; its buffered rows are recovered from the last checkpoint
          }
        });
  }

  /** Files handed over whose completion has not run yet. */
  int inFlight() {
    return inFlight;
  }

  /** Waits (processing mail) until every file handed over is written and completed. */
  void awaitAll() throws IOException {
    awaitBelow(1);
  }

  /** Waits (processing mail) until at least one more file is completed. */
  void awaitOne() throws IOException {
    awaitBelow(inFlight);
  }

  private void awaitBelow(int limit) throws IOException {
    while (inFlight > 0 && inFlight >= limit) {
      try {
        mailbox.yield();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while waiting for a data file to be written", e);
      }
    }
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
