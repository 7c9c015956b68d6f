package org.spatialingest.sizing;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalInt;

/**
 * How Iceberg plans the read tasks ("task groups") of a table scan with no delete files,
 * re-implemented from the behaviour of Iceberg's source (apache/iceberg, core module):
 *
 * <ol>
 *   <li>Split size: {@code read.split.target-size} (default 128 MiB, {@code
 *       TableProperties.SPLIT_SIZE}). Iceberg's Spark reader shrinks it when the scan would give
 *       fewer splits than the parallelism ({@code SparkScan.adjustSplitSize} → {@code
 *       TableScanUtil.adjustSplitSize}: if {@code ceil(scanBytes / splitSize) < parallelism}, use
 *       {@code max(scanBytes / parallelism, min(16 MiB, splitSize))}); that applies only when
 *       {@code --default-parallelism} is given here.
 *   <li>Splitting ({@code BaseContentScanTask.split}): a Parquet file with usable split offsets
 *       (recorded, in ascending order, last offset below the file size: {@code
 *       BaseFile.hasWellDefinedOffsets}) becomes one split per offset, from it to the next offset
 *       or the file end ({@code OffsetsAwareSplitScanTaskIterator}); the split size plays no part.
 *       Otherwise the file is cut into {@code min(splitSize, remaining)} pieces ({@code
 *       FixedSizeSplitScanTaskIterator}); a zero-length file gives no split.
 *   <li>Packing ({@code TableScanUtil.planTaskGroups} with {@code BinPacking.PackingIterable},
 *       largest-bin-first): splits are taken in order with weight {@code max(length, openFileCost)}
 *       ({@code read.split.open-file-cost}, default 4 MiB). Each goes into the first open bin it
 *       fits ({@code binWeight + weight <= splitSize}), else into a new bin; when more than {@code
 *       lookback} ({@code read.split.planning-lookback}, default 10) bins are open, the heaviest
 *       (the first of equals) is closed. At the end the remaining bins close in the order they were
 *       opened.
 *   <li>Within a task, adjacent splits of the same file that touch are merged into one range
 *       ({@code TableScanUtil.mergeTasks}); chunk counts here are after that merge.
 * </ol>
 *
 * Not modelled: delete files (they add their size and one open cost each to a split's weight),
 * grouping by partition for storage-partitioned joins, and {@code
 * read.split.adaptive-size.enabled=false}.
 */
public final class IcebergSplitPlanning {
  public static final long DEFAULT_SPLIT_SIZE = 128L << 20;
  public static final long DEFAULT_OPEN_FILE_COST = 4L << 20;
  public static final int DEFAULT_LOOKBACK = 10;

  /** {@code TableScanUtil.MIN_SPLIT_SIZE}. */
  public static final long MIN_ADAPTIVE_SPLIT_SIZE = 16L << 20;

  private IcebergSplitPlanning() {}

  /** The split size after the Spark reader's adaptive adjustment to {@code parallelism}. */
  public static long adjustSplitSize(long scanBytes, int parallelism, long splitSize) {
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be >= 1, was " + parallelism);
    }
    long splitCount = ceilDiv(scanBytes, splitSize);
    long adjusted = Math.max(scanBytes / parallelism, Math.min(MIN_ADAPTIVE_SPLIT_SIZE, splitSize));
    return splitCount < parallelism ? adjusted : splitSize;
  }

  /** Whether Iceberg would use these recorded offsets for a file of {@code fileSize} bytes. */
  public static boolean usableOffsets(List<Long> offsets, long fileSize) {
    if (offsets == null || offsets.isEmpty() || offsets.get(offsets.size() - 1) >= fileSize) {
      return false;
    }
    for (int i = 1; i < offsets.size(); i++) {
      if (offsets.get(i) < offsets.get(i - 1)) {
        return false;
      }
    }
    return true;
  }

  /** The splits of one file, in file order. */
  public static List<FileChunk> split(int file, long fileSize, List<Long> offsets, long splitSize) {
    if (splitSize <= 0) {
      throw new IllegalArgumentException("split size must be > 0, was " + splitSize);
    }
    List<FileChunk> chunks = new ArrayList<>();
    if (usableOffsets(offsets, fileSize)) {
      for (int i = 0; i < offsets.size(); i++) {
        long start = offsets.get(i);
        long end = i + 1 < offsets.size() ? offsets.get(i + 1) : fileSize;
        chunks.add(new FileChunk(file, start, end - start));
      }
    } else {
      long offset = 0;
      long remaining = fileSize;
      while (remaining > 0) {
        long len = Math.min(splitSize, remaining);
        chunks.add(new FileChunk(file, offset, len));
        offset += len;
        remaining -= len;
      }
    }
    return chunks;
  }

  public static List<FileChunk> splitAll(ScanInput input, long splitSize) {
    List<FileChunk> chunks = new ArrayList<>();
    for (int f = 0; f < input.fileCount(); f++) {
      chunks.addAll(split(f, input.size(f), input.splitOffsets(f), splitSize));
    }
    return chunks;
  }

  public static long weight(FileChunk chunk, long openFileCost) {
    return Math.max(chunk.length(), openFileCost);
  }

  /**
   * Lookback bin packing, largest bin first, of splits in the given order. Bins keep their items'
   * order.
   */
  public static List<List<FileChunk>> pack(
      List<FileChunk> splits, long splitSize, int lookback, long openFileCost) {
    if (lookback < 1) {
      throw new IllegalArgumentException("lookback must be >= 1, was " + lookback);
    }
    if (openFileCost < 0) {
      throw new IllegalArgumentException("open file cost must be >= 0, was " + openFileCost);
    }
    List<List<FileChunk>> closed = new ArrayList<>();
    Deque<Bin> open = new ArrayDeque<>();
    for (FileChunk split : splits) {
      long w = weight(split, openFileCost);
      Bin target = null;
      for (Bin bin : open) {
        if (bin.weight + w <= splitSize) {
          target = bin;
          break;
        }
      }
      if (target != null) {
        target.add(split, w);
        continue;
      }
      Bin fresh = new Bin();
      fresh.add(split, w);
      open.addLast(fresh);
      if (open.size() > lookback) {
        Bin heaviest = null;
        for (Bin bin : open) {
          if (heaviest == null || bin.weight > heaviest.weight) {
            heaviest = bin;
          }
        }
        removeIdentity(open, heaviest);
        closed.add(heaviest.items);
      }
    }
    for (Bin bin : open) {
      closed.add(bin.items);
    }
    return closed;
  }

  /**
   * Joins adjacent ranges of the same file that touch, as Iceberg merges split tasks within a task
   * group.
   */
  public static List<FileChunk> mergeAdjacent(List<FileChunk> task) {
    List<FileChunk> merged = new ArrayList<>();
    FileChunk last = null;
    for (FileChunk c : task) {
      if (last != null && last.file() == c.file() && last.end() == c.offset()) {
        last = new FileChunk(last.file(), last.offset(), last.length() + c.length());
      } else {
        if (last != null) {
          merged.add(last);
        }
        last = c;
      }
    }
    if (last != null) {
      merged.add(last);
    }
    return merged;
  }

  /** The whole estimate. {@code parallelism} empty: no adaptive split size. */
  public static TaskEstimate estimate(
      ScanInput input,
      long splitSize,
      long openFileCost,
      int lookback,
      OptionalInt parallelism,
      OptionalInt slots) {
    if (splitSize <= 0) {
      throw new IllegalArgumentException("split size must be > 0, was " + splitSize);
    }
    long effective =
        parallelism.isPresent()
            ? adjustSplitSize(input.totalBytes(), parallelism.getAsInt(), splitSize)
            : splitSize;
    List<FileChunk> splits = splitAll(input, effective);
    long planning = 0;
    for (FileChunk s : splits) {
      planning = Math.addExact(planning, weight(s, openFileCost));
    }
    List<List<FileChunk>> tasks = new ArrayList<>();
    for (List<FileChunk> t : pack(splits, effective, lookback, openFileCost)) {
      tasks.add(mergeAdjacent(t));
    }
    return TaskEstimate.of(
        "iceberg", input, splitSize, effective, openFileCost, planning, tasks, slots);
  }

  private static void removeIdentity(Deque<Bin> bins, Bin bin) {
    for (Iterator<Bin> it = bins.iterator(); it.hasNext(); ) {
      if (it.next() == bin) {
        it.remove();
        return;
      }
    }
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  private static final class Bin {
    private final List<FileChunk> items = new ArrayList<>();
    private long weight;

    void add(FileChunk chunk, long w) {
      items.add(chunk);
      weight += w;
    }
  }
}
