package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.flink.streaming.runtime.tasks.StreamTaskActionExecutor;
import org.apache.flink.streaming.runtime.tasks.mailbox.MailboxExecutorImpl;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailboxImpl;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.junit.jupiter.api.Test;

/** The encoder thread's contract, on a real Flink task mailbox whose thread is the test's. */
class FileEncoderTest {
  private final TaskMailboxImpl mailbox = new TaskMailboxImpl(Thread.currentThread());
  private final MailboxExecutorImpl executor =
      new MailboxExecutorImpl(mailbox, 0, StreamTaskActionExecutor.IMMEDIATE);

  @Test
  void boundsFilesInFlightAndCompletesThemOnTheTaskThreadInOrder() throws Exception {
    List<String> completed = new ArrayList<>(); // written from completions only
    List<Thread> completedOn = new ArrayList<>();
    List<Thread> writtenOn = new ArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    try (FileEncoder encoder = new FileEncoder(executor, "test-encoder", 2)) {
      encoder.start();
      for (String name : List.of("f0", "f1")) {
        encoder.submit(
            () -> {
              synchronized (writtenOn) {
                writtenOn.add(Thread.currentThread());
              }
              await(release);
              return file(name);
            },
            (file, nanos) -> {
              completed.add(file.location());
              completedOn.add(Thread.currentThread());
            });
      }
      assertThat(encoder.inFlight()).isEqualTo(2);
      assertThat(completed).isEmpty();

      Thread releaser =
          new Thread(
              () -> {
                sleep(200);
                release.countDown();
              });
      releaser.start();
      // two in flight: the third is accepted only after one of them completed here
      encoder.submit(
          () -> file("f2"),
          (file, nanos) -> {
            completed.add(file.location());
            completedOn.add(Thread.currentThread());
          });
      assertThat(completed).isNotEmpty().startsWith("/t/f0");

      encoder.awaitAll();
      releaser.join();
      assertThat(completed).containsExactly("/t/f0", "/t/f1", "/t/f2");
      assertThat(completedOn).containsOnly(Thread.currentThread());
      assertThat(writtenOn).hasSize(2).doesNotContain(Thread.currentThread());
      assertThat(encoder.inFlight()).isZero();
    }
  }

  @Test
  void aFailedWriteFailsTheTaskThreadThatWaitsForIt() throws Exception {
    List<String> completed = new ArrayList<>();
    try (FileEncoder encoder = new FileEncoder(executor, "test-encoder", 2)) {
      encoder.start();
      encoder.submit(
          () -> {
            throw new IOException("disk full");
          },
          (file, nanos) -> completed.add(file.location()));
      assertThatThrownBy(encoder::awaitAll)
          .hasStackTraceContaining("Writing a data file failed")
          .hasStackTraceContaining("disk full");
      assertThat(completed).isEmpty();
    }
  }

  @Test
  void beforeStartFilesAreWrittenOnTheCallingThread() throws Exception {
    List<Thread> writtenOn = new ArrayList<>();
    List<String> completed = new ArrayList<>();
    try (FileEncoder encoder = new FileEncoder(executor, "test-encoder", 2)) {
      encoder.submit(
          () -> {
            writtenOn.add(Thread.currentThread());
            return file("restored");
          },
          (file, nanos) -> completed.add(file.location()));
      assertThat(completed).containsExactly("/t/restored");
      assertThat(writtenOn).containsExactly(Thread.currentThread());
      assertThat(encoder.inFlight()).isZero();
    }
  }

  private static DataFile file(String name) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath("/t/" + name)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1)
        .withRecordCount(1)
        .build();
  }

  private static void await(CountDownLatch latch) throws IOException {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
