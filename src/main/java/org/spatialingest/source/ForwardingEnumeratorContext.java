package org.spatialingest.source;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.metrics.groups.SplitEnumeratorMetricGroup;

/**
 * An enumerator context that passes every call to the real one: the wrappers of this package
 * override only what they observe or guard.
 */
abstract class ForwardingEnumeratorContext<SplitT extends SourceSplit>
    implements SplitEnumeratorContext<SplitT> {
  protected final SplitEnumeratorContext<SplitT> delegate;

  ForwardingEnumeratorContext(SplitEnumeratorContext<SplitT> delegate) {
    this.delegate = delegate;
  }

  @Override
  public <T> void callAsync(Callable<T> callable, BiConsumer<T, Throwable> handler) {
    delegate.callAsync(callable, handler);
  }

  @Override
  public <T> void callAsync(
      Callable<T> callable,
      BiConsumer<T, Throwable> handler,
      long initialDelayMillis,
      long periodMillis) {
    delegate.callAsync(callable, handler, initialDelayMillis, periodMillis);
  }

  @Override
  public SplitEnumeratorMetricGroup metricGroup() {
    return delegate.metricGroup();
  }

  @Override
  public void sendEventToSourceReader(int subtaskId, SourceEvent event) {
    delegate.sendEventToSourceReader(subtaskId, event);
  }

  @Override
  public void sendEventToSourceReader(int subtaskId, int attemptNumber, SourceEvent event) {
    delegate.sendEventToSourceReader(subtaskId, attemptNumber, event);
  }

  @Override
  public int currentParallelism() {
    return delegate.currentParallelism();
  }

  @Override
  public Map<Integer, ReaderInfo> registeredReaders() {
    return delegate.registeredReaders();
  }

  @Override
  public Map<Integer, Map<Integer, ReaderInfo>> registeredReadersOfAttempts() {
    return delegate.registeredReadersOfAttempts();
  }

  @Override
  public void assignSplits(SplitsAssignment<SplitT> newSplitAssignments) {
    delegate.assignSplits(newSplitAssignments);
  }

  @Override
  public void assignSplit(SplitT split, int subtask) {
    delegate.assignSplit(split, subtask);
  }

  @Override
  public void signalNoMoreSplits(int subtask) {
    delegate.signalNoMoreSplits(subtask);
  }

  @Override
  public void runInCoordinatorThread(Runnable runnable) {
    delegate.runInCoordinatorThread(runnable);
  }

  @Override
  public void setIsProcessingBacklog(boolean isProcessingBacklog) {
    delegate.setIsProcessingBacklog(isProcessingBacklog);
  }
}
