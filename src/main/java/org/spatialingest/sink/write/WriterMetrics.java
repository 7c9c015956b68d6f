package org.spatialingest.sink.write;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.table.PropertyColumns;

/**
 * A writer subtask's metrics, in group {@code spatialSink}: what it buffers (gauges read from its
 * tables when reported), the files it closed per reason, its staging and, under {@code
 * input.typed-properties: auto}, the properties kept in {@code properties} per reason.
 */
final class WriterMetrics {
  private final Map<CloseReason, Counter> filesClosed = new EnumMap<>(CloseReason.class);
  private final Counter stagedBytes;
  private final Counter stagedRuns;
  private final Counter parks;
  private final Counter parkedBytesRead;
  private final Counter lateArrivalCloses;
  private volatile long lastStagingMs;

  WriterMetrics(MetricGroup parent, List<TableWriter> tables) {
    MetricGroup group = parent.addGroup("spatialSink");
    group.gauge("bufferedBytes", () -> tables.stream().mapToLong(t -> t.buffers().bytes()).sum());
    group.gauge("bufferedRecords", () -> tables.stream().mapToLong(t -> t.buffers().rows()).sum());
    group.gauge("openPartitions", () -> tables.stream().mapToInt(t -> t.buffers().size()).sum());
    group.gauge(
        "parkedPartitions", () -> tables.stream().mapToInt(t -> t.buffers().parked()).sum());
    group.gauge(
        "parkedBytes", () -> tables.stream().mapToLong(t -> t.buffers().parkedBytes()).sum());
    group.gauge("encodedPerBufferedRatio", () -> tables.get(SinkTables.PRIMARY).encodedRatio());
    group.gauge(
        "oldestBufferedAgeMs",
        () -> {
          long oldest =
              tables.stream()
                  .mapToLong(t -> t.buffers().oldestIngestMillis())
                  .min()
                  .orElse(Long.MAX_VALUE);
          return oldest == Long.MAX_VALUE ? 0L : Math.max(0L, System.currentTimeMillis() - oldest);
        });
    group.gauge("lastStagingMs", () -> lastStagingMs);
    stagedBytes = group.counter("stagedBytes");
    stagedRuns = group.counter("stagedRuns");
    parks = group.counter("parks");
    parkedBytesRead = group.counter("parkedBytesRead");
    lateArrivalCloses = group.counter("filesClosedLateArrival");
    for (CloseReason reason : CloseReason.values()) {
      filesClosed.put(reason, group.counter("filesClosed_" + reason.code()));
    }
    if (tables.stream().anyMatch(t -> t.propertyColumns() != null)) {
      for (PropertyColumns.Reason reason : PropertyColumns.Reason.values()) {
        group.gauge(
            "propertiesKept_" + reason.code(),
            () ->
                tables.stream()
                    .map(t -> t.propertyColumns())
                    .filter(Objects::nonNull)
                    .mapToLong(p -> p.keptCounts().getOrDefault(reason, 0L))
                    .sum());
      }
    }
  }

  void fileClosed(CloseReason reason) {
    filesClosed.get(reason).inc();
  }

  /** A latency close of rows that were already old when they reached the writer. */
  void lateArrivalClosed() {
    lateArrivalCloses.inc();
  }

  void runStaged(long bytes) {
    stagedBytes.inc(bytes);
    stagedRuns.inc();
  }

  /** A buffer was parked (its memory released, its rows in runs). */
  void parked() {
    parks.inc();
  }

  /** Parked rows were read back from their runs to write a file. */
  void parkedRead(long bytes) {
    parkedBytesRead.inc(bytes);
  }

  void stagingTook(long millis) {
    lastStagingMs = millis;
  }
}
