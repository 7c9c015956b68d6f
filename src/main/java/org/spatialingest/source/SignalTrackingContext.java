package org.spatialingest.source;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/**
 * The real enumerator context, passed through unchanged, that also observes two things for {@link
 * NoMoreSplitsResignalingEnumerator}:
 *
 * <ul>
 *   <li>whether the one-shot asynchronous calls issued through it are settled: none in flight,
 *       counting the calls a handler chains (Kafka's enumerator discovers partitions in one call,
 *       then initialises their splits in a second one issued from the first one's handler). {@code
 *       onSettled} runs on the coordinator thread right after the handler that left nothing in
 *       flight has returned normally;
 *   <li>which reader subtasks were signalled no more splits since {@link #forget(int)} last ran for
 *       them.
 * </ul>
 *
 * A periodic call ({@link #isPeriodic()}) never settles. Used only from the coordinator thread,
 * like every enumerator and its handlers, so it needs no locking.
 */
final class SignalTrackingContext<SplitT extends SourceSplit>
    extends ForwardingEnumeratorContext<SplitT> {
  private final Runnable onSettled;
  private final Set<Integer> signalled = new HashSet<>();
  private int inFlight;
  private boolean periodic;

  SignalTrackingContext(SplitEnumeratorContext<SplitT> delegate, Runnable onSettled) {
    super(delegate);
    this.onSettled = onSettled;
  }

  /** No one-shot call is in flight (also true before the first one). */
  boolean idle() {
    return inFlight == 0;
  }

  /**
   * A periodic call was issued: the enumerator keeps discovering, so there is no point where it is
   * done.
   */
  boolean isPeriodic() {
    return periodic;
  }

  boolean wasSignalled(int subtask) {
    return signalled.contains(subtask);
  }

  /** Forgets the signal of {@code subtask}: its reader registered again (a new attempt). */
  void forget(int subtask) {
    signalled.remove(subtask);
  }

  @Override
  public void signalNoMoreSplits(int subtask) {
    signalled.add(subtask);
    delegate.signalNoMoreSplits(subtask);
  }

  @Override
  public <T> void callAsync(Callable<T> callable, BiConsumer<T, Throwable> handler) {
    inFlight++;
    delegate.callAsync(
        callable,
        (result, failure) -> {
          handler.accept(
              result, failure); // a handler that throws fails the job; then nothing is settled
          if (--inFlight == 0) {
            onSettled.run();
          }
        });
  }

  @Override
  public <T> void callAsync(
      Callable<T> callable,
      BiConsumer<T, Throwable> handler,
      long initialDelayMillis,
      long periodMillis) {
    periodic = true;
    delegate.callAsync(callable, handler, initialDelayMillis, periodMillis);
  }
}
