package org.spatialingest.source;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A source whose readers admit at most {@code maxRecordsPerSecond} records and {@code maxBytesPerSecond} bytes per
 * reader subtask (0 = no cap): the Flink analogue of Spark's {@code maxOffsetsPerTrigger} / {@code maxBytesPerTrigger}.
 * Enumerator, splits and state are the wrapped source's own, so savepoints stay compatible with and without the cap.
 */
public final class AdmissionControlledSource<T, SplitT extends SourceSplit, EnumT>
    implements Source<T, SplitT, EnumT>, ResultTypeQueryable<T> {
  private final Source<T, SplitT, EnumT> delegate;
  private final double maxRecordsPerSecond;
  private final double maxBytesPerSecond;
  private final RecordSizer<T> sizer;

  public AdmissionControlledSource(Source<T, SplitT, EnumT> delegate, double maxRecordsPerSecond,
      double maxBytesPerSecond, RecordSizer<T> sizer) {
    if (maxRecordsPerSecond < 0 || maxBytesPerSecond < 0) {
      throw new IllegalArgumentException("admission caps must be >= 0 (0 = off)");
    }
    this.delegate = delegate;
    this.maxRecordsPerSecond = maxRecordsPerSecond;
    this.maxBytesPerSecond = maxBytesPerSecond;
    this.sizer = sizer;
  }

  @Override
  public Boundedness getBoundedness() {
    return delegate.getBoundedness();
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
    AdmissionBudget budget = new AdmissionBudget(maxRecordsPerSecond, maxBytesPerSecond, System::nanoTime);
    return new AdmissionControlledReader<>(delegate.createReader(context), budget, sizer, context.metricGroup());
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> createEnumerator(SplitEnumeratorContext<SplitT> context) throws Exception {
    return delegate.createEnumerator(context);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(SplitEnumeratorContext<SplitT> context, EnumT checkpoint)
      throws Exception {
    return delegate.restoreEnumerator(context, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<SplitT> getSplitSerializer() {
    return delegate.getSplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<EnumT> getEnumeratorCheckpointSerializer() {
    return delegate.getEnumeratorCheckpointSerializer();
  }

  @SuppressWarnings("unchecked")
  @Override
  public TypeInformation<T> getProducedType() {
    return ((ResultTypeQueryable<T>) delegate).getProducedType();
  }
}
