package org.spatialingest.source;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.InputStatus;

/**
 * A source reader that passes every call to the real one: the wrappers of this package override
 * only what they meter or guard. Splits and state stay the wrapped reader's own.
 */
abstract class ForwardingSourceReader<T, SplitT extends SourceSplit>
    implements SourceReader<T, SplitT> {
  protected final SourceReader<T, SplitT> delegate;

  ForwardingSourceReader(SourceReader<T, SplitT> delegate) {
    this.delegate = delegate;
  }

  @Override
  public void start() {
    delegate.start();
  }

  @Override
  public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
    return delegate.pollNext(output);
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    return delegate.isAvailable();
  }

  @Override
  public List<SplitT> snapshotState(long checkpointId) {
    return delegate.snapshotState(checkpointId);
  }

  @Override
  public void addSplits(List<SplitT> splits) {
    delegate.addSplits(splits);
  }

  @Override
  public void notifyNoMoreSplits() {
    delegate.notifyNoMoreSplits();
  }

  @Override
  public void handleSourceEvents(SourceEvent sourceEvent) {
    delegate.handleSourceEvents(sourceEvent);
  }

  @Override
  public void notifyCheckpointComplete(long checkpointId) throws Exception {
    delegate.notifyCheckpointComplete(checkpointId);
  }

  @Override
  public void notifyCheckpointAborted(long checkpointId) throws Exception {
    delegate.notifyCheckpointAborted(checkpointId);
  }

  @Override
  public void pauseOrResumeSplits(
      Collection<String> splitsToPause, Collection<String> splitsToResume) {
    delegate.pauseOrResumeSplits(splitsToPause, splitsToResume);
  }

  @Override
  public void close() throws Exception {
    delegate.close();
  }
}
