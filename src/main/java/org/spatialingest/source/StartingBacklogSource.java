package org.spatialingest.source;

import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A source whose enumerator reports that it is processing backlog (FLIP-309, {@link
 * SplitEnumeratorContext#setIsProcessingBacklog}) from its start until every reader subtask has
 * registered, then that it is not. With {@code execution.checkpointing.interval-during-backlog: 0}
 * (what {@code SpatialIngestJob.configureCheckpointing} sets unless the Flink configuration sets
 * it) Flink's checkpoint coordinator schedules no further trigger while the tasks are still being
 * deployed and initialised, and the next one a checkpoint interval after the last reader
 * registered. Without that, each trigger of those seconds is refused ({@code
 * NOT_ALL_REQUIRED_TASKS_RUNNING}) and counted as a failed checkpoint.
 *
 * <p>What it cannot prevent: Flink 2.1 draws the first trigger's delay from {@code [min-pause, C]}
 * when the job switches to RUNNING, and fires it whatever the backlog says; only the triggers after
 * it follow the backlog interval. So a start still shows that trigger refused (at C = 1 s nearly
 * always), and one more if a task of another vertex is still initialising C after the last reader
 * registered (the enumerator sees only its readers). The flag says nothing about the data: a job
 * catching up after downtime checkpoints at C as soon as its readers are registered. Enumerator,
 * splits and state are the wrapped source's own, so savepoints stay compatible with and without it.
 * Cost: one map lookup per reader registration.
 */
public final class StartingBacklogSource<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  private static final Logger LOG = LoggerFactory.getLogger(StartingBacklogSource.class);

  private StartingBacklogSource(Source<T, SplitT, EnumT> delegate) {
    super(delegate);
  }

  /** {@code source} with its start reported as backlog; it must be ResultTypeQueryable. */
  public static <T, SplitT extends SourceSplit, EnumT> Source<T, SplitT, EnumT> of(
      Source<T, SplitT, EnumT> source) {
    return new StartingBacklogSource<>(source);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> createEnumerator(SplitEnumeratorContext<SplitT> context)
      throws Exception {
    return new Enumerator<>(context, delegate.createEnumerator(context));
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(
      SplitEnumeratorContext<SplitT> context, EnumT checkpoint) throws Exception {
    return new Enumerator<>(context, delegate.restoreEnumerator(context, checkpoint));
  }

  /**
   * The delegate enumerator, with the backlog flag set at {@link #start} and cleared once, when the
   * last reader subtask registers. Runs on the coordinator thread only, like every enumerator.
   */
  private static final class Enumerator<SplitT extends SourceSplit, EnumT>
      extends ForwardingSplitEnumerator<SplitT, EnumT> {
    private final SplitEnumeratorContext<SplitT> context;
    private boolean starting;

    Enumerator(SplitEnumeratorContext<SplitT> context, SplitEnumerator<SplitT, EnumT> delegate) {
      super(delegate);
      this.context = context;
    }

    @Override
    public void start() {
      starting = true;
      context.setIsProcessingBacklog(true);
      delegate.start();
      endStartWhenEveryReaderRegistered(); // readers may have registered before the start
    }

    @Override
    public void addReader(int subtaskId) {
      delegate.addReader(subtaskId);
      endStartWhenEveryReaderRegistered();
    }

    private void endStartWhenEveryReaderRegistered() {
      if (starting && context.registeredReaders().size() >= context.currentParallelism()) {
        starting = false;
        LOG.info(
            "All {} source readers registered: checkpoints at the configured interval from now",
            context.currentParallelism());
        context.setIsProcessingBacklog(false);
      }
    }
  }
}
