package org.spatialingest.source;

import java.util.function.Consumer;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;

/**
 * The output a wrapping source reader hands to the reader it wraps: shows every record to an
 * observer before passing it on to the real output of the current {@code pollNext}, directly or
 * through the per-split outputs the wrapped reader keeps across calls (the Kafka reader does).
 * Costs one call per record.
 */
final class ObservingReaderOutput<T> implements ReaderOutput<T> {
  private final Consumer<T> observer;
  private ReaderOutput<T> target;

  ObservingReaderOutput(Consumer<T> observer) {
    this.observer = observer;
  }

  /** The real output of this {@code pollNext}; set before each call into the wrapped reader. */
  ObservingReaderOutput<T> to(ReaderOutput<T> target) {
    this.target = target;
    return this;
  }

  @Override
  public void collect(T record) {
    observer.accept(record);
    target.collect(record);
  }

  @Override
  public void collect(T record, long timestamp) {
    observer.accept(record);
    target.collect(record, timestamp);
  }

  @Override
  public void emitWatermark(Watermark watermark) {
    target.emitWatermark(watermark);
  }

  @Override
  public void markIdle() {
    target.markIdle();
  }

  @Override
  public void markActive() {
    target.markActive();
  }

  @Override
  public SourceOutput<T> createOutputForSplit(String splitId) {
    SourceOutput<T> split = target.createOutputForSplit(splitId);
    return new SourceOutput<>() {
      @Override
      public void collect(T record) {
        observer.accept(record);
        split.collect(record);
      }

      @Override
      public void collect(T record, long timestamp) {
        observer.accept(record);
        split.collect(record, timestamp);
      }

      @Override
      public void emitWatermark(Watermark watermark) {
        split.emitWatermark(watermark);
      }

      @Override
      public void markIdle() {
        split.markIdle();
      }

      @Override
      public void markActive() {
        split.markActive();
      }
    };
  }

  @Override
  public void releaseOutputForSplit(String splitId) {
    target.releaseOutputForSplit(splitId);
  }
}
