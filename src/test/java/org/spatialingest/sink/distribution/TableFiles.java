package org.spatialingest.sink.distribution;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.spatialingest.table.TelemetryTable;

/** What the distribution tests read from a table's files: Hilbert-key intervals, bbox pruning. */
public final class TableFiles {
  private static final int HILBERT_FIELD = TelemetryTable.SCHEMA.findField("hilbert").fieldId();

  private TableFiles() {}

  public static List<DataFile> files(Table table) throws Exception {
    List<DataFile> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
      tasks.forEach(t -> files.add(t.file()));
    }
    return files;
  }

  public static long bound(DataFile f, boolean lower) {
    ByteBuffer b = (lower ? f.lowerBounds() : f.upperBounds()).get(HILBERT_FIELD);
    return Conversions.<Long>fromByteBuffer(Types.LongType.get(), b);
  }

  public static long span(DataFile f) {
    return bound(f, false) - bound(f, true);
  }

  /** From the lowest key of any file to the highest. */
  public static long totalSpan(List<DataFile> files) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (DataFile f : files) {
      min = Math.min(min, bound(f, true));
      max = Math.max(max, bound(f, false));
    }
    return max - min;
  }

  /** The files' key intervals summed, over the total span: 1 when they tile it without overlap. */
  public static double summedSpans(List<DataFile> files) {
    return files.stream().mapToDouble(f -> (double) span(f)).sum() / totalSpan(files);
  }

  /** The bbox filter README documents: the row's bbox intersects the box. */
  public static Expression bbox(double minX, double minY, double maxX, double maxY) {
    return Expressions.and(
        Expressions.and(
            Expressions.greaterThanOrEqual("bbox.xmax", minX),
            Expressions.lessThanOrEqual("bbox.xmin", maxX)),
        Expressions.and(
            Expressions.greaterThanOrEqual("bbox.ymax", minY),
            Expressions.lessThanOrEqual("bbox.ymin", maxY)));
  }

  public static int plannedFiles(Table table, Expression filter) throws Exception {
    int n = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(filter).planFiles()) {
      for (FileScanTask ignored : tasks) {
        n++;
      }
    }
    return n;
  }

  /** The share of the files a {@code degrees} × {@code degrees} box around (x, y) keeps. */
  public static double keptShare(Table table, int files, double x, double y, double degrees)
      throws Exception {
    double h = degrees / 2;
    return plannedFiles(table, bbox(x - h, y - h, x + h, y + h)) / (double) files;
  }
}
