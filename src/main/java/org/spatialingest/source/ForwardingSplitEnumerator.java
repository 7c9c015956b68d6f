package org.spatialingest.source;

import java.io.IOException;
import java.util.List;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;

/**
 * An enumerator that is another enumerator in every respect — splits, state, events, checkpoint
 * notifications — so a wrapper changes no savepoint. Wrappers extend it and override only what they
 * change, calling the delegate from there. Runs on the coordinator thread, like the delegate.
 */
abstract class ForwardingSplitEnumerator<SplitT extends SourceSplit, EnumT>
    implements SplitEnumerator<SplitT, EnumT> {
  protected final SplitEnumerator<SplitT, EnumT> delegate;

  ForwardingSplitEnumerator(SplitEnumerator<SplitT, EnumT> delegate) {
    this.delegate = delegate;
  }

  @Override
  public void start() {
    delegate.start();
  }

  @Override
  public void addReader(int subtaskId) {
    delegate.addReader(subtaskId);
  }

  @Override
  public void addSplitsBack(List<SplitT> splits, int subtaskId) {
    delegate.addSplitsBack(splits, subtaskId);
  }

  @Override
  public void handleSplitRequest(int subtaskId, String requesterHostname) {
    delegate.handleSplitRequest(subtaskId, requesterHostname);
  }

  @Override
  public void handleSourceEvent(int subtaskId, SourceEvent sourceEvent) {
    delegate.handleSourceEvent(subtaskId, sourceEvent);
  }

  @Override
  public EnumT snapshotState(long checkpointId) throws Exception {
    return delegate.snapshotState(checkpointId);
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
  public void close() throws IOException {
    delegate.close();
  }
}
