package org.spatialingest.sizing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The files a read would scan: their sizes and, where known, their split offsets (Parquet row-group
 * starts, as Iceberg records them in {@code split_offsets}). This is the seam between where sizes
 * come from (a sizes file today, an Iceberg table's manifests later) and the planning math.
 *
 * @param sizes file sizes in bytes, each &ge; 0
 * @param splitOffsets per file, the recorded split offsets or {@code null} when unknown; either
 *     empty (none known for any file) or the same length as {@code sizes}
 */
public record ScanInput(List<Long> sizes, List<List<Long>> splitOffsets) {

  public ScanInput {
    if (sizes == null) {
      throw new IllegalArgumentException("sizes are required");
    }
    for (int i = 0; i < sizes.size(); i++) {
      Long s = sizes.get(i);
      if (s == null || s < 0) {
        throw new IllegalArgumentException("file " + i + " has a bad size: " + s);
      }
    }
    sizes = List.copyOf(sizes);
    if (splitOffsets == null || splitOffsets.isEmpty()) {
      splitOffsets = List.of();
    } else if (splitOffsets.size() != sizes.size()) {
      throw new IllegalArgumentException(
          "split offsets given for "
              + splitOffsets.size()
              + " files but there are "
              + sizes.size());
    } else {
      List<List<Long>> copy = new ArrayList<>(splitOffsets.size());
      for (List<Long> o : splitOffsets) {
        copy.add(o == null ? null : List.copyOf(o));
      }
      splitOffsets = Collections.unmodifiableList(copy);
    }
  }

  /** Sizes only, no split offsets. */
  public static ScanInput ofSizes(List<Long> sizes) {
    return new ScanInput(sizes, List.of());
  }

  public int fileCount() {
    return sizes.size();
  }

  public long size(int file) {
    return sizes.get(file);
  }

  /** Recorded split offsets of a file, or {@code null}. */
  public List<Long> splitOffsets(int file) {
    return splitOffsets.isEmpty() ? null : splitOffsets.get(file);
  }

  public long totalBytes() {
    long t = 0;
    for (long s : sizes) {
      t = Math.addExact(t, s);
    }
    return t;
  }
}
