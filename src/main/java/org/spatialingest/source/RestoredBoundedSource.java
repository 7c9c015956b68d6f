package org.spatialingest.source;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/**
 * Works around FLINK-31006 (open in flink-connector-kafka 5.0.0-2.1): a bounded {@code KafkaSource}
 * whose enumerator is restored — from a checkpoint or savepoint, or by a global failover — never
 * sends {@code NoMoreSplitsEvent}, so the job never finishes. This source is the wrapped one in
 * every respect (readers, splits, split and enumerator-state serializers, boundedness, produced
 * type; the operator keeps its uid where it is set), so state written with and without the wrapper
 * is interchangeable; only a <em>restored</em> enumerator is wrapped in a {@link
 * NoMoreSplitsResignalingEnumerator}, which signals the readers that the Kafka enumerator forgets.
 * A fresh enumerator (first start, or a failover before any completed checkpoint) is the delegate's
 * own, which signals correctly. Remove the wrapper once the connector release in use carries the
 * upstream fix (then {@code BoundedKafkaFailoverTest#theConnectorAloneStillHangs} fails).
 */
public final class RestoredBoundedSource<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {

  private RestoredBoundedSource(Source<T, SplitT, EnumT> delegate) {
    super(delegate);
  }

  /**
   * {@code source} wrapped when it is bounded, else {@code source} itself. It must push its splits
   * from one-shot discovery like {@code KafkaSource} (see {@link
   * NoMoreSplitsResignalingEnumerator}) and be {@link
   * org.apache.flink.api.java.typeutils.ResultTypeQueryable}.
   */
  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> of(
      Source<T, SplitT, EnumT> source) {
    return source.getBoundedness() == Boundedness.BOUNDED
        ? new RestoredBoundedSource<>(source)
        : source;
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(
      SplitEnumeratorContext<SplitT> context, EnumT checkpoint) throws Exception {
    return NoMoreSplitsResignalingEnumerator.wrap(
        context, tracking -> delegate.restoreEnumerator(tracking, checkpoint));
  }
}
