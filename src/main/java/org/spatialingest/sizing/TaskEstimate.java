package org.spatialingest.sizing;

import java.util.List;
import java.util.OptionalInt;

/**
 * What {@code estimate-tasks} reports. Byte figures of a task are the data bytes of its ranges (no
 * open cost).
 *
 * @param engine {@code spark} or {@code iceberg}
 * @param inputFiles files in the input, including zero-length ones
 * @param totalBytes sum of the file sizes
 * @param maxPartitionBytes the configured cap: {@code spark.sql.files.maxPartitionBytes} or
 *     Iceberg's {@code read.split.target-size}
 * @param maxSplitBytes the split size actually used (after Spark's parallelism rule or Iceberg's
 *     adaptive size)
 * @param openCost the per-file open cost used in packing
 * @param planningBytes the bytes the packing weighs: Spark's {@code sum(length + openCost)} over
 *     files, Iceberg's {@code sum(max(length, openCost))} over splits
 * @param tasks the planned tasks, each a list of ranges
 * @param slots concurrent task slots, if known
 */
public record TaskEstimate(
    String engine,
    int inputFiles,
    long totalBytes,
    long maxPartitionBytes,
    long maxSplitBytes,
    long openCost,
    long planningBytes,
    List<List<FileChunk>> tasks,
    OptionalInt slots) {

  public TaskEstimate {
    tasks = List.copyOf(tasks);
    slots = slots == null ? OptionalInt.empty() : slots;
    if (slots.isPresent() && slots.getAsInt() < 1) {
      throw new IllegalArgumentException("slots must be >= 1, was " + slots.getAsInt());
    }
  }

  static TaskEstimate of(
      String engine,
      ScanInput input,
      long maxPartitionBytes,
      long maxSplitBytes,
      long openCost,
      long planningBytes,
      List<List<FileChunk>> tasks,
      OptionalInt slots) {
    return new TaskEstimate(
        engine,
        input.fileCount(),
        input.totalBytes(),
        maxPartitionBytes,
        maxSplitBytes,
        openCost,
        planningBytes,
        tasks,
        slots);
  }

  public int estimatedTasks() {
    return tasks.size();
  }

  public static long taskBytes(List<FileChunk> task) {
    long b = 0;
    for (FileChunk c : task) {
      b += c.length();
    }
    return b;
  }

  public double totalMiB() {
    return totalBytes / (double) (1L << 20);
  }

  public double avgTaskBytes() {
    if (tasks.isEmpty()) {
      return 0;
    }
    long sum = 0;
    for (List<FileChunk> t : tasks) {
      sum += taskBytes(t);
    }
    return sum / (double) tasks.size();
  }

  public long minTaskBytes() {
    return tasks.stream().mapToLong(TaskEstimate::taskBytes).min().orElse(0);
  }

  public long maxTaskBytes() {
    return tasks.stream().mapToLong(TaskEstimate::taskBytes).max().orElse(0);
  }

  public double avgChunksPerTask() {
    return tasks.stream().mapToInt(List::size).average().orElse(0);
  }

  public int minChunksPerTask() {
    return tasks.stream().mapToInt(List::size).min().orElse(0);
  }

  public int maxChunksPerTask() {
    return tasks.stream().mapToInt(List::size).max().orElse(0);
  }

  /** {@code ceil(tasks / slots)}, empty without slots. */
  public OptionalInt waves() {
    if (slots.isEmpty()) {
      return OptionalInt.empty();
    }
    int s = slots.getAsInt();
    return OptionalInt.of((tasks.size() + s - 1) / s);
  }
}
