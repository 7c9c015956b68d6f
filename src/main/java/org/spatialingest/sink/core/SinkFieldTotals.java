package org.spatialingest.sink.core;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * What the sink adds to a set of closed files, summed as a commit needs it (its snapshot summary,
 * its metrics, the staging runs to delete), without a {@link ClosedFile} per file: the committer of
 * 16,384 files per batch spent most of its remaining CPU building each file's map of ingest
 * seconds. Mutable; filled by {@link #add} or {@link ClosedFileManifests#readAppendable}.
 */
@Internal
public final class SinkFieldTotals {
  private int files;
  private long bufferedBytes;
  private long minIngestMillis = Long.MAX_VALUE;
  private long maxIngestMillis = Long.MIN_VALUE;
  private final Map<CloseReason, Integer> byReason = new EnumMap<>(CloseReason.class);
  private final Map<Long, Long> ingestSecondCounts = new HashMap<>();
  private final List<String> consumedStaging = new ArrayList<>();

  /** Adds one file's fields. */
  public void add(ClosedFile f) {
    file(f.reason(), f.bufferedBytes(), f.minIngestMillis(), f.maxIngestMillis());
    f.ingestSecondCounts().forEach(this::ingestSecond);
    consumedStaging.addAll(f.consumedStaging());
  }

  /** Adds everything {@code other} holds. */
  public void addAll(SinkFieldTotals other) {
    files += other.files;
    bufferedBytes += other.bufferedBytes;
    minIngestMillis = Math.min(minIngestMillis, other.minIngestMillis);
    maxIngestMillis = Math.max(maxIngestMillis, other.maxIngestMillis);
    other.byReason.forEach((r, n) -> byReason.merge(r, n, Integer::sum));
    other.ingestSecondCounts.forEach(this::ingestSecond);
    consumedStaging.addAll(other.consumedStaging);
  }

  void file(CloseReason reason, long buffered, long minIngest, long maxIngest) {
    files++;
    bufferedBytes += buffered;
    minIngestMillis = Math.min(minIngestMillis, minIngest);
    maxIngestMillis = Math.max(maxIngestMillis, maxIngest);
    byReason.merge(reason, 1, Integer::sum);
  }

  void ingestSecond(long second, long rows) {
    ingestSecondCounts.merge(second, rows, Long::sum);
  }

  void staging(String path) {
    consumedStaging.add(path);
  }

  public int files() {
    return files;
  }

  public long bufferedBytes() {
    return bufferedBytes;
  }

  /** {@link Long#MAX_VALUE} if there are no files. */
  public long minIngestMillis() {
    return minIngestMillis;
  }

  /** {@link Long#MIN_VALUE} if there are no files. */
  public long maxIngestMillis() {
    return maxIngestMillis;
  }

  public Map<CloseReason, Integer> byReason() {
    return byReason;
  }

  /** Rows per ingest second (epoch seconds) over all files. */
  public Map<Long, Long> ingestSecondCounts() {
    return ingestSecondCounts;
  }

  public List<String> consumedStaging() {
    return consumedStaging;
  }
}
