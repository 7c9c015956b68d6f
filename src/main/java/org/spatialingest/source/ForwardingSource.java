package org.spatialingest.source;

import java.util.Set;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.watermark.WatermarkDeclaration;
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
 * A source that is another source in every respect — readers, enumerators, splits, both state
 * serializers, boundedness, watermarks, produced type — so savepoints written with and without a
 * wrapper are interchangeable. Wrappers extend it and override only what they change.
 */
abstract class ForwardingSource<T, SplitT extends SourceSplit, EnumT>
    implements Source<T, SplitT, EnumT>, ResultTypeQueryable<T> {
  protected final Source<T, SplitT, EnumT> delegate;

  ForwardingSource(Source<T, SplitT, EnumT> delegate) {
    if (!(delegate instanceof ResultTypeQueryable<?>)) {
      throw new IllegalArgumentException(
          "the source must declare its produced type: " + delegate.getClass());
    }
    this.delegate = delegate;
  }

  @Override
  public Boundedness getBoundedness() {
    return delegate.getBoundedness();
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext readerContext) throws Exception {
    return delegate.createReader(readerContext);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> createEnumerator(SplitEnumeratorContext<SplitT> context)
      throws Exception {
    return delegate.createEnumerator(context);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(
      SplitEnumeratorContext<SplitT> context, EnumT checkpoint) throws Exception {
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

  @Override
  public Set<? extends WatermarkDeclaration> declareWatermarks() {
    return delegate.declareWatermarks();
  }

  @SuppressWarnings("unchecked")
  @Override
  public TypeInformation<T> getProducedType() {
    return ((ResultTypeQueryable<T>) delegate).getProducedType();
  }
}
