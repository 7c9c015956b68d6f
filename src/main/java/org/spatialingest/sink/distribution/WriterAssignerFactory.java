package org.spatialingest.sink.distribution;

import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.OperatorCoordinator;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.CoordinatedOperatorFactory;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.spatialingest.sink.core.RowBatch;

/**
 * Creates the {@link WriterAssigner} subtasks, wired to their {@link RangeCoordinator}. Chained to
 * the operator in front of it: a coordinated operator chains like any other (Flink collects the
 * coordinators of every operator in a chain), so placing a row costs no network hop.
 */
final class WriterAssignerFactory<T> extends AbstractStreamOperatorFactory<RowBatch>
    implements CoordinatedOperatorFactory<RowBatch>, OneInputStreamOperatorFactory<T, RowBatch> {
  private static final long serialVersionUID = 1L;
  private final WriterAssigner.Settings<T> settings;

  /** the coordinator's {@link StartingStatistics}, or null */
  private final byte[] startingStatistics;

  WriterAssignerFactory(WriterAssigner.Settings<T> settings, byte[] startingStatistics) {
    this.settings = settings;
    this.startingStatistics = startingStatistics;
    setChainingStrategy(ChainingStrategy.ALWAYS);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <S extends StreamOperator<RowBatch>> S createStreamOperator(
      StreamOperatorParameters<RowBatch> parameters) {
    OperatorID id = parameters.getStreamConfig().getOperatorID();
    WriterAssigner<T> operator =
        new WriterAssigner<>(
            parameters,
            settings,
            parameters.getOperatorEventDispatcher().getOperatorEventGateway(id));
    parameters.getOperatorEventDispatcher().registerEventHandler(id, operator);
    return (S) operator;
  }

  @Override
  public OperatorCoordinator.Provider getCoordinatorProvider(
      String operatorName, OperatorID operatorId) {
    return new RangeCoordinator.Provider(
        operatorName,
        operatorId,
        settings.bounds(),
        settings.writers(),
        settings.maxOpenPartitions(),
        settings.seedRatio(),
        startingStatistics);
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Class<? extends StreamOperator<?>> getStreamOperatorClass(ClassLoader classLoader) {
    return (Class) WriterAssigner.class;
  }
}
