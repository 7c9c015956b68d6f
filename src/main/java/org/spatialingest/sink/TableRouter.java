package org.spatialingest.sink;

import java.io.Serializable;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.Either;

/**
 * Which of the sink's tables an input element belongs to, and its row. One sink writing several tables (the telemetry
 * table and its rejects table) commits them together, so the positions it records cover every record, whichever table
 * its row went to.
 *
 * @param <T> the sink's input type
 */
public interface TableRouter<T> extends Serializable {
  /** Index of the element's table, in the order the tables were added to the sink's builder. */
  int table(T element);

  RowData row(T element);

  /** One table: every element is a row of table 0. */
  static TableRouter<RowData> single() {
    return new Single();
  }

  /** Two tables: {@code Left} rows go to table 0, {@code Right} rows to table 1. */
  static TableRouter<Either<RowData, RowData>> either() {
    return new EitherRouter();
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
