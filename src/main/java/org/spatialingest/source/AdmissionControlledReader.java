package org.spatialingest.source;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MeterView;
import org.apache.flink.metrics.MetricGroup;

/**
 * Wraps a source reader and admits records at most at the configured rates, without blocking the
 * task thread: when the budget is spent, {@link #pollNext} returns {@code NOTHING_AVAILABLE} and
 * {@link #isAvailable} completes once it has refilled, so the mailbox keeps running checkpoints and
 * timers meanwhile.
 *
 * <p>Unlike Flink's {@code RateLimitedSourceReader}, every call is forwarded — checkpoint
 * completion (the Kafka reader commits group offsets there), aborts, split pause/resume, source
 * events — so the wrapped reader behaves exactly as it would unwrapped.
 */
final class AdmissionControlledReader<T, SplitT extends SourceSplit>
    extends ForwardingSourceReader<T, SplitT> {
  private final AdmissionBudget budget;
  private final RecordSizer<T> sizer;
  private final ObservingReaderOutput<T> output = new ObservingReaderOutput<>(this::count);

  /** records and bytes the wrapped reader emitted in this {@code pollNext} */
  private long records;

  private long bytes;
  private final Counter throttledMs;
  private final Counter admittedRecords;
  private final Counter admittedBytes;

  AdmissionControlledReader(
      SourceReader<T, SplitT> delegate,
      AdmissionBudget budget,
      RecordSizer<T> sizer,
      MetricGroup metrics) {
    super(delegate);
    this.budget = budget;
    this.sizer = sizer;
    MetricGroup group = metrics.addGroup("admission");
    this.throttledMs = group.counter("throttledMs");
    group.meter("throttledTimeMsPerSecond", new MeterView(throttledMs));
    this.admittedRecords = group.counter("admittedRecords");
    this.admittedBytes = group.counter("admittedBytes");
    group.meter("admittedRecordsPerSecond", new MeterView(admittedRecords));
    group.meter("admittedBytesPerSecond", new MeterView(admittedBytes));
    group.gauge("overshoots", budget::overshoots);
    // 0 = no cap holds records back, 1 = records/s binds, 2 = bytes/s binds
    group.gauge("bindingCap", () -> budget.binding().ordinal());
  }

  @Override
  public InputStatus pollNext(ReaderOutput<T> readerOutput) throws Exception {
    if (budget.waitNanos() > 0) {
      return InputStatus.NOTHING_AVAILABLE;
    }
    InputStatus status = delegate.pollNext(output.to(readerOutput));
    budget.charge(records, bytes);
    admittedRecords.inc(records);
    admittedBytes.inc(bytes);
    records = 0;
    bytes = 0;
    return status;
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    long wait = budget.waitNanos();
    if (wait > 0) {
      throttledMs.inc(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
      return CompletableFuture.runAsync(
          () -> {}, CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS));
    }
    return delegate.isAvailable();
  }

  private void count(T record) {
    records++;
    bytes += sizer.bytes(record);
  }
}
