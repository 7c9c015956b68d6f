package org.spatialingest.sink.core;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
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
   * Which buffer of its partition the element goes to: a writer keeps one buffer per partition and
   * buffer id. A distribution by key range sets it to the range's first slot in the partition's
   * finest split ({@code RangeCount#finest}), so a range keeps its id when the range count halves
   * or doubles, and ids order a partition's buffers by key (neighbours pack into one file). It is
   * not the range's index among the current ranges. 0 when rows are not distributed by range.
   */
  default int bufferId(T element) {
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
   * The batches a distribution step sends ({@link RowBatch}): each holds serialized rows of one
   * table, partition and buffer id, which the writer buffers as they are ({@link #batch}).
   */
  static TableRouter<RowBatch> batched() {
    return new Batched();
  }

  /**
   * The element as a batch of serialized rows, or {@code null} when it is one row ({@link #row}).
   */
  default RowBatch batch(T element) {
    return null;
  }

  /** See {@link #batched()}. */
  final class Batched implements TableRouter<RowBatch> {
    @Override
    public int table(RowBatch element) {
      return element.table();
    }

    @Override
    public RowData row(RowBatch element) {
      throw new UnsupportedOperationException("a batch holds serialized rows: see batch()");
    }

    @Override
    public int bufferId(RowBatch element) {
      return element.bufferId();
    }

    @Override
    public RowBatch batch(RowBatch element) {
      return element;
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
