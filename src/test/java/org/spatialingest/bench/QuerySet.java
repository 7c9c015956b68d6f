package org.spatialingest.bench;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

/**
 * The reader's fixed query set over one input (issue #24): {@value #BOXES} bbox queries of {@value
 * #BOX_DEGREES}° × {@value #BOX_DEGREES}° on the bbox columns, each centred on the position of an
 * input record drawn with a fixed seed (so the boxes are where the data is, the same for every
 * pipeline), and {@value #TIME_RANGES} one-hour {@code event_time} ranges ending at the first,
 * second, ... fifth fifth of the input's event-time span (a run's input spans seconds to minutes of
 * event time, so a range ending there selects the first k fifths of it).
 */
record QuerySet(List<Query> queries) {
  static final int BOXES = 20;
  static final double BOX_DEGREES = 10;
  static final int TIME_RANGES = 5;
  static final long RANGE_MILLIS = 3_600_000;

  /** One query: its kind ({@code bbox} or {@code time}), Iceberg filter and exact predicate. */
  record Query(String kind, String name, double[] box, long fromMillis, long toMillis) {
    boolean bbox() {
      return kind.equals("bbox");
    }

    /** The filter handed to Iceberg's scan planning and row-group filtering. */
    Expression filter() {
      if (bbox()) {
        // the bbox intersects the box
        return Expressions.and(
            Expressions.and(
                Expressions.greaterThanOrEqual("bbox.xmax", box[0]),
                Expressions.lessThanOrEqual("bbox.xmin", box[2])),
            Expressions.and(
                Expressions.greaterThanOrEqual("bbox.ymax", box[1]),
                Expressions.lessThanOrEqual("bbox.ymin", box[3])));
      }
      return Expressions.and(
          Expressions.greaterThanOrEqual("event_time", fromMillis * 1000),
          Expressions.lessThan("event_time", toMillis * 1000));
    }

    /** The column the exact predicate needs. */
    String column() {
      return bbox() ? "bbox" : "event_time";
    }

    /** The exact predicate on a row read with {@link #column()}. */
    boolean matches(Record r) {
      if (bbox()) {
        Record b = (Record) r.getField("bbox");
        return (Double) b.getField("xmax") >= box[0]
            && (Double) b.getField("xmin") <= box[2]
            && (Double) b.getField("ymax") >= box[1]
            && (Double) b.getField("ymin") <= box[3];
      }
      long t = ((OffsetDateTime) r.getField("event_time")).toInstant().toEpochMilli();
      return t >= fromMillis && t < toMillis;
    }
  }

  /**
   * The set over an input whose records lie at {@code positions} (x, y) with event times from
   * {@code firstEventMs} to {@code lastEventMs}; the same arguments give the same set.
   */
  static QuerySet of(List<double[]> positions, long firstEventMs, long lastEventMs, long seed) {
    if (positions.isEmpty()) {
      throw new IllegalStateException("no input to place the query set over");
    }
    Random random = new Random(seed);
    List<Query> qs = new ArrayList<>();
    for (int i = 0; i < BOXES; i++) {
      double[] c = positions.get(random.nextInt(positions.size()));
      double h = BOX_DEGREES / 2;
      qs.add(
          new Query(
              "bbox",
              "bbox-" + (i + 1),
              new double[] {c[0] - h, c[1] - h, c[0] + h, c[1] + h},
              0,
              0));
    }
    long span = lastEventMs + 1 - firstEventMs;
    for (int k = 1; k <= TIME_RANGES; k++) {
      long to = firstEventMs + span * k / TIME_RANGES;
      qs.add(new Query("time", "time-" + k, null, to - RANGE_MILLIS, to));
    }
    return new QuerySet(List.copyOf(qs));
  }
}
