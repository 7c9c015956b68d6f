package org.spatialingest.source;

import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * A source whose readers admit at most {@code maxRecordsPerSecond} records and {@code
 * maxBytesPerSecond} bytes per reader subtask (0 = no cap): the Flink analogue of Spark's {@code
 * maxOffsetsPerTrigger} / {@code maxBytesPerTrigger}. Enumerator, splits and state are the wrapped
 * source's own, so savepoints stay compatible with and without the cap.
 */
public final class AdmissionControlledSource<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  private final double maxRecordsPerSecond;
  private final double maxBytesPerSecond;
  private final RecordSizer<T> sizer;

  public AdmissionControlledSource(
      Source<T, SplitT, EnumT> delegate,
      double maxRecordsPerSecond,
      double maxBytesPerSecond,
      RecordSizer<T> sizer) {
    super(delegate);
    if (maxRecordsPerSecond < 0 || maxBytesPerSecond < 0) {
      throw new IllegalArgumentException("admission caps must be >= 0 (0 = off)");
    }
    this.maxRecordsPerSecond = maxRecordsPerSecond;
    this.maxBytesPerSecond = maxBytesPerSecond;
    this.sizer = sizer;
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
    AdmissionBudget budget =
        new AdmissionBudget(maxRecordsPerSecond, maxBytesPerSecond, System::nanoTime);
    return new AdmissionControlledReader<>(
        delegate.createReader(context), budget, sizer, context.metricGroup());
  }
}
