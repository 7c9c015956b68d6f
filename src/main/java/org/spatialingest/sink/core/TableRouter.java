package org.spatialingest.sink.core;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Either;

/**
 * Which of the sink's tables an input element belongs to, and its row. One sink writing several
 * tables (the telemetry table and its rejects table) commits them together, so the positions it
 * records cover every record, whichever table its row went to.
 *
 * @param <T> the sink's input type
 */
@Internal
public interface TableRouter<T> extends Serializable {
  /** Index of the element's table, in the order the tables were added to the sink's builder. */
  int table(T element);

  RowData row(T element);

  /**
   * The key range of its partition the element was assigned to by a distribution step before the
   * writers: a writer keeps one buffer, so one file, per partition and range. 0 when rows are not
   * distributed by range.
   */
  default int range(T element) {
    return 0;
  }

  /** One table: every element is a row of table 0. */
  static TableRouter<RowData> single() {
    return new Single();
  }

  /** Two tables: {@code Left} rows go to table 0, {@code Right} rows to table 1. */
  static TableRouter<Either<RowData, RowData>> either() {
    return new EitherRouter();
  }

  /**
   * Elements a distribution step has placed: {@code f0} the writer subtask it chose, {@code f1} the
   * key range, {@code f2} the element {@code inner} routes.
   */
  static <T> TableRouter<Tuple3<Integer, Integer, T>> ranged(TableRouter<T> inner) {
    return new Ranged<>(inner);
  }

  /** See {@link #ranged}. */
  final class Ranged<T> implements TableRouter<Tuple3<Integer, Integer, T>> {
    private final TableRouter<T> inner;

    private Ranged(TableRouter<T> inner) {
      this.inner = inner;
    }

    @Override
    public int table(Tuple3<Integer, Integer, T> element) {
      return inner.table(element.f2);
    }

    @Override
    public RowData row(Tuple3<Integer, Integer, T> element) {
      return inner.row(element.f2);
    }

    @Override
    public int range(Tuple3<Integer, Integer, T> element) {
      return element.f1;
    }
  }

  /** See {@link #single()}. */
  final class Single implements TableRouter<RowData> {
    @Override
    public int table(RowData element) {
      return 0;
    }

    @Override
    public RowData row(RowData element) {
      return element;
    }
  }

  /** See {@link #either()}. */
  final class EitherRouter implements TableRouter<Either<RowData, RowData>> {
    @Override
    public int table(Either<RowData, RowData> element) {
      return element.isLeft() ? 0 : 1;
    }

    @Override
    public RowData row(Either<RowData, RowData> element) {
      return element.isLeft() ? element.left() : element.right();
    }
  }
}
