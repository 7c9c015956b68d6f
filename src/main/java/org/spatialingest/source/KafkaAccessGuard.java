package org.spatialingest.source;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.MetricGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the Kafka source's authentication and authorization failures end the job after a bounded
 * number of restarts.
 *
 * <p>Why: the connector's enumerator (flink-connector-kafka 5.0) runs partition discovery and the
 * starting-offset lookup through {@code SplitEnumeratorContext.callAsync}; when its admin client
 * fails ({@code SaslAuthenticationException}, {@code TopicAuthorizationException}) the handler
 * throws a {@code FlinkRuntimeException} ("Failed to list subscribed topic partitions"), the source
 * coordinator fails the job, and the job restarts: under Flink's default restart strategy with
 * checkpointing (exponential delay, unbounded attempts) that repeats for ever. A reader's consumer
 * that loses its credentials fails its task the same way.
 *
 * <p>This wrapper counts such failures, per job and per enumerator or reader subtask, in this JVM
 * (a restart creates new enumerators and readers, so the count lives outside them). The first
 * {@link #ATTEMPTS}{@code - 1} fail as before (a restart may pick up a rotated secret that a config
 * provider reads from a file); the next one, if each came within {@link #STREAK_WINDOW} of the one
 * before, is a {@link KafkaAccessLostException}, which Flink does not restart. Everything else
 * (splits, state, serializers) is the wrapped source's own.
 */
public final class KafkaAccessGuard<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  /** Consecutive access failures of one enumerator or reader subtask that end the job. */
  public static final int ATTEMPTS = 3;

  private static final Logger LOG = LoggerFactory.getLogger(KafkaAccessGuard.class);

  /** A failure later than this after the previous one starts a new streak. */
  public static final Duration STREAK_WINDOW = Duration.ofMinutes(10);

  private static final Map<String, Streak> FAILURES = new ConcurrentHashMap<>();

  private KafkaAccessGuard(Source<T, SplitT, EnumT> delegate) {
    super(delegate);
  }

  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> of(
      Source<T, SplitT, EnumT> source) {
    return new KafkaAccessGuard<>(source);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> createEnumerator(SplitEnumeratorContext<SplitT> context)
      throws Exception {
    return delegate.createEnumerator(new GuardedContext<>(context));
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(
      SplitEnumeratorContext<SplitT> context, EnumT checkpoint) throws Exception {
    return delegate.restoreEnumerator(new GuardedContext<>(context), checkpoint);
  }

  @Override
  public SourceReader<T, SplitT> createReader(SourceReaderContext context) throws Exception {
    String key = jobOf(context.metricGroup()) + "/reader-" + context.getIndexOfSubtask();
    return new GuardedReader<>(delegate.createReader(context), key);
  }

  /**
   * If {@code failure} is a Kafka access failure: the exception to throw instead, terminal once
   * {@code key} has failed {@link #ATTEMPTS} times, each within {@link #STREAK_WINDOW} of the
   * previous one; otherwise null.
   */
  static RuntimeException accessFailure(String key, Throwable failure) {
    return KafkaAccessException.accessFailure(failure)
        .map(
            refused -> {
              long now = System.nanoTime();
              Streak streak =
                  FAILURES.compute(
                      key,
                      (k, s) ->
                          s == null || now - s.lastNanos() > STREAK_WINDOW.toNanos()
                              ? new Streak(1, now)
                              : new Streak(s.count() + 1, now));
              String line = KafkaAccessException.describe(refused);
              if (streak.count() >= ATTEMPTS) {
                FAILURES.remove(key);
                return (RuntimeException)
                    new KafkaAccessLostException(
                        line
                            + " ("
                            + streak.count()
                            + " times in a row; the job stops instead of restarting)",
                        failure);
              }
              LOG.warn("{} ({} of {} before the job stops)", line, streak.count(), ATTEMPTS);
              return new KafkaAccessException(line, failure);
            })
        .orElse(null);
  }

  /** Access failures of one enumerator or reader in a row, and when the last one happened. */
  private record Streak(int count, long lastNanos) {}

  /** The job id in a metric group's scope (enumerators and readers both have it). */
  private static String jobOf(MetricGroup group) {
    return group.getAllVariables().getOrDefault("<job_id>", "job");
  }

  /** The enumerator's context; each asynchronous call's handler sees access failures first. */
  private static final class GuardedContext<SplitT extends SourceSplit>
      extends ForwardingEnumeratorContext<SplitT> {
    private final String key;

    GuardedContext(SplitEnumeratorContext<SplitT> delegate) {
      super(delegate);
      this.key = jobOf(delegate.metricGroup()) + "/enumerator";
    }

    private <V> BiConsumer<V, Throwable> guarded(BiConsumer<V, Throwable> handler) {
      return (result, failure) -> {
        if (failure != null) {
          RuntimeException refused = accessFailure(key, failure);
          if (refused != null) {
            throw refused; // the coordinator fails the job with it
          }
        }
        handler.accept(result, failure);
      };
    }

    @Override
    public <V> void callAsync(Callable<V> callable, BiConsumer<V, Throwable> handler) {
      delegate.callAsync(callable, guarded(handler));
    }

    @Override
    public <V> void callAsync(
        Callable<V> callable, BiConsumer<V, Throwable> handler, long initialDelay, long period) {
      delegate.callAsync(callable, guarded(handler), initialDelay, period);
    }
  }

  /** A reader whose fetch failures are checked for access failures. */
  private static final class GuardedReader<T, SplitT extends SourceSplit>
      extends ForwardingSourceReader<T, SplitT> {
    private final String key;

    GuardedReader(SourceReader<T, SplitT> delegate, String key) {
      super(delegate);
      this.key = key;
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
      try {
        return delegate.pollNext(output);
      } catch (Exception e) {
        RuntimeException refused = accessFailure(key, e);
        throw refused != null ? refused : e;
      }
    }
  }
}
