package org.spatialingest.source;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps a restored enumerator of a bounded source and makes sure every registered reader is told
 * that no more splits will come (FLINK-31006: Kafka's restored enumerator finds every partition
 * already assigned, returns early from its discovery and never signals, so the readers stop at
 * their stopping offsets and wait forever).
 *
 * <p>Contract: once the delegate's one-shot asynchronous calls have settled (see {@link
 * SignalTrackingContext}), and from then on after each {@link #addReader} and {@link
 * #addSplitsBack}, each registered reader that the delegate has not signalled since it registered
 * gets exactly one {@code signalNoMoreSplits} from this wrapper. Nothing is signalled twice to the
 * same registration (a second signal to a finished reader fails the job), and nothing is signalled
 * while the delegate runs periodic discovery. This is right only for enumerators that, like
 * Kafka's, learn their splits from one-shot calls only and push every split to its registered owner
 * as soon as they have it; a pull-based enumerator (splits on {@code handleSplitRequest}) must not
 * be wrapped. Everything else (state, checkpoints, events) is the delegate's.
 */
final class NoMoreSplitsResignalingEnumerator<SplitT extends SourceSplit, EnumT>
    extends ForwardingSplitEnumerator<SplitT, EnumT> {
  private static final Logger LOG =
      LoggerFactory.getLogger(NoMoreSplitsResignalingEnumerator.class);

  /** Creates the delegate enumerator with the context it must use. */
  @FunctionalInterface
  interface Factory<SplitT extends SourceSplit, EnumT> {
    SplitEnumerator<SplitT, EnumT> create(SplitEnumeratorContext<SplitT> context) throws Exception;
  }

  private final SignalTrackingContext<SplitT> context;
  private boolean settled;

  private NoMoreSplitsResignalingEnumerator(
      SignalTrackingContext<SplitT> context, SplitEnumerator<SplitT, EnumT> delegate) {
    super(delegate);
    this.context = context;
  }

  /** The delegate created by {@code factory} on a tracking view of {@code context}, wrapped. */
  static <SplitT extends SourceSplit, EnumT> SplitEnumerator<SplitT, EnumT> wrap(
      SplitEnumeratorContext<SplitT> context, Factory<SplitT, EnumT> factory) throws Exception {
    // the tracking view exists before the delegate, the wrapper after it: the view reaches the
    // wrapper through this holder (the delegate's asynchronous calls settle after start())
    AtomicReference<NoMoreSplitsResignalingEnumerator<SplitT, EnumT>> wrapper =
        new AtomicReference<>();
    SignalTrackingContext<SplitT> tracking =
        new SignalTrackingContext<>(context, () -> wrapper.get().onSettled());
    wrapper.set(new NoMoreSplitsResignalingEnumerator<>(tracking, factory.create(tracking)));
    return wrapper.get();
  }

  @Override
  public void start() {
    delegate.start();
    if (context.idle()) { // the delegate issued no one-shot call: it is done already
      onSettled();
    }
  }

  @Override
  public void addReader(int subtaskId) {
    context.forget(subtaskId); // a new registration: earlier signals went to an earlier attempt
    delegate.addReader(subtaskId);
    signalIfMissing(Set.of(subtaskId));
  }

  @Override
  public void addSplitsBack(List<SplitT> splits, int subtaskId) {
    delegate.addSplitsBack(splits, subtaskId);
    signalIfMissing(Set.of(subtaskId));
  }

  private void onSettled() {
    if (settled || context.isPeriodic()) {
      return;
    }
    settled = true;
    signalIfMissing(new TreeSet<>(context.registeredReaders().keySet()));
  }

  private void signalIfMissing(Set<Integer> subtasks) {
    if (!settled) {
      return;
    }
    for (int subtask : subtasks) {
      if (context.registeredReaders().containsKey(subtask) && !context.wasSignalled(subtask)) {
        LOG.info(
            "Restored bounded source: signalling no more splits to reader {}, which its enumerator did not "
                + "(FLINK-31006)",
            subtask);
        context.signalNoMoreSplits(subtask);
      }
    }
  }
}
