package org.spatialingest.sizing;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;

/**
 * How Spark SQL turns the files of a (non-bucketed) file-source scan into read tasks,
 * re-implemented from the behaviour of Spark's source (apache/spark, checked against the main
 * branch):
 *
 * <ol>
 *   <li>{@code FilePartition.maxSplitBytes}
 *       (sql/core/.../execution/datasources/FilePartition.scala): {@code
 *       min(spark.sql.files.maxPartitionBytes, max(spark.sql.files.openCostInBytes, bytesPerCore))}
 *       with {@code bytesPerCore = totalBytes / minPartitionNum} (integer division), {@code
 *       totalBytes} the sum over files of {@code length + openCostInBytes} ({@code
 *       ScanFileListing.calculateTotalPartitionBytes}), and {@code minPartitionNum =
 *       spark.sql.files.minPartitionNum}, else {@code spark.sql.leafNodeDefaultParallelism}, else
 *       {@code spark.default.parallelism} ({@code SparkSession.leafNodeDefaultParallelism}).
 *   <li>{@code PartitionedFileUtil.splitFiles} (sql/core/.../execution/PartitionedFileUtil.scala):
 *       a splittable file (Parquet is) is cut at offsets {@code 0, maxSplitBytes, 2*maxSplitBytes,
 *       ...} below its length; a zero-length file therefore yields no range at all.
 *   <li>{@code FileSourceScanExec} (sql/core/.../execution/DataSourceScanExec.scala) sorts all
 *       ranges by length, descending (a stable sort).
 *   <li>{@code FilePartition.getFilePartitions}: "next fit decreasing": before adding a range,
 *       close the current task when {@code currentSize + range.length > maxSplitBytes}; then {@code
 *       currentSize += range.length + openCost}.
 * </ol>
 *
 * Not modelled: bucketed scans, non-splittable formats, and {@code spark.sql.files.maxPartitionNum}
 * (Spark 3.5+: when set and exceeded, Spark re-packs the same ranges with {@code ceil(totalBytes /
 * maxPartitionNum)}).
 */
public final class SparkFilePacking {
  /** {@code spark.sql.files.maxPartitionBytes} default, 128 MiB. */
  public static final long DEFAULT_MAX_PARTITION_BYTES = 128L << 20;

  /** {@code spark.sql.files.openCostInBytes} default, 4 MiB. */
  public static final long DEFAULT_OPEN_COST = 4L << 20;

  private SparkFilePacking() {}

  /**
   * Sum over files of {@code length + openCost}: Spark's {@code totalBytes} for {@code
   * maxSplitBytes}.
   */
  public static long planningBytes(ScanInput input, long openCost) {
    long total = 0;
    for (long size : input.sizes()) {
      total = Math.addExact(total, Math.addExact(size, openCost));
    }
    return total;
  }

  /**
   * The split size Spark uses. Without a parallelism (empty) the result is {@code
   * maxPartitionBytes}: the value Spark reaches whenever {@code totalBytes / parallelism >=
   * maxPartitionBytes}.
   */
  public static long maxSplitBytes(
      long maxPartitionBytes, long openCost, OptionalInt minPartitionNum, long totalBytes) {
    requirePositive("max partition bytes", maxPartitionBytes);
    if (openCost < 0) {
      throw new IllegalArgumentException("open cost must be >= 0, was " + openCost);
    }
    if (minPartitionNum.isEmpty()) {
      return maxPartitionBytes;
    }
    if (minPartitionNum.getAsInt() < 1) {
      throw new IllegalArgumentException(
          "parallelism must be >= 1, was " + minPartitionNum.getAsInt());
    }
    long bytesPerCore = totalBytes / minPartitionNum.getAsInt();
    return Math.min(maxPartitionBytes, Math.max(openCost, bytesPerCore));
  }

  /** The ranges {@code splitFiles} cuts one splittable file into, in file order. */
  public static List<FileChunk> split(int file, long length, long maxSplitBytes) {
    requirePositive("max split bytes", maxSplitBytes);
    List<FileChunk> chunks = new ArrayList<>();
    for (long offset = 0; offset < length; offset += maxSplitBytes) {
      chunks.add(new FileChunk(file, offset, Math.min(maxSplitBytes, length - offset)));
    }
    return chunks;
  }

  /**
   * Splits every file, then sorts the ranges by length, descending, keeping input order among
   * equals.
   */
  public static List<FileChunk> splitAndSort(ScanInput input, long maxSplitBytes) {
    List<FileChunk> chunks = new ArrayList<>();
    for (int f = 0; f < input.fileCount(); f++) {
      chunks.addAll(split(f, input.size(f), maxSplitBytes));
    }
    chunks.sort(Comparator.comparingLong(FileChunk::length).reversed()); // List.sort is stable
    return chunks;
  }

  /** Next-fit packing of already ordered ranges into tasks. */
  public static List<List<FileChunk>> pack(
      List<FileChunk> ordered, long maxSplitBytes, long openCost) {
    List<List<FileChunk>> tasks = new ArrayList<>();
    List<FileChunk> current = new ArrayList<>();
    long currentSize = 0;
    for (FileChunk chunk : ordered) {
      if (currentSize + chunk.length() > maxSplitBytes) {
        if (!current.isEmpty()) {
          tasks.add(current);
          current = new ArrayList<>();
        }
        currentSize = 0;
      }
      currentSize += chunk.length() + openCost;
      current.add(chunk);
    }
    if (!current.isEmpty()) {
      tasks.add(current);
    }
    return tasks;
  }

  /** The whole estimate. */
  public static TaskEstimate estimate(
      ScanInput input,
      long maxPartitionBytes,
      long openCost,
      OptionalInt defaultParallelism,
      OptionalInt slots) {
    long planning = planningBytes(input, openCost);
    long maxSplit = maxSplitBytes(maxPartitionBytes, openCost, defaultParallelism, planning);
    List<List<FileChunk>> tasks = pack(splitAndSort(input, maxSplit), maxSplit, openCost);
    return TaskEstimate.of(
        "spark", input, maxPartitionBytes, maxSplit, openCost, planning, tasks, slots);
  }

  private static void requirePositive(String what, long v) {
    if (v <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, was " + v);
    }
  }
}
