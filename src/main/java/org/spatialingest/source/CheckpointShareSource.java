package org.spatialingest.source;

import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pull-based source (splits handed out on {@code handleSplitRequest}, as Flink's {@code
 * FileSource} does) whose enumerator hands out at most {@code maxSplits} splits, and about {@code
 * maxBytes} bytes, between two completed checkpoints: the share of one checkpoint (Spark's {@code
 * maxFilesPerTrigger} and {@code maxBytesPerTrigger}). The byte cap is soft: a request is served
 * while the share is below it, so the split that crosses it goes through whole and a split larger
 * than the cap still moves the job on. With both caps, whichever is reached first ends the share.
 * Requests past the share wait, in order, until a checkpoint completes. Splits and enumerator state
 * are the wrapped source's own, so savepoints are the same with and without the caps; the share
 * counts from zero again after a restore.
 *
 * <p>Cost: a counter per assigned split and a queue of at most one waiting request per reader, on
 * the coordinator thread.
 */
public final class CheckpointShareSource<T, SplitT extends SourceSplit, EnumT>
    extends ForwardingSource<T, SplitT, EnumT> {
  private static final Logger LOG = LoggerFactory.getLogger(CheckpointShareSource.class);

  private final int maxSplits;
  private final long maxBytes;
  private final SplitSize<SplitT> size;

  /**
   * @param maxSplits splits per checkpoint, at most; 0: no cap
   * @param maxBytes bytes per checkpoint, a soft cap; 0: no cap
   * @param size a split's bytes
   */
  public CheckpointShareSource(
      Source<T, SplitT, EnumT> delegate, int maxSplits, long maxBytes, SplitSize<SplitT> size) {
    super(delegate);
    if (maxSplits < 0 || maxBytes < 0) {
      throw new IllegalArgumentException("checkpoint shares must be >= 0 (0 = no cap)");
    }
    this.maxSplits = maxSplits;
    this.maxBytes = maxBytes;
    this.size = size;
  }

  /** A split's bytes (shipped with the source to the coordinator, so serializable). */
  @FunctionalInterface
  public interface SplitSize<SplitT> extends Serializable {
    long bytes(SplitT split);
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> createEnumerator(SplitEnumeratorContext<SplitT> context)
      throws Exception {
    Share<SplitT> share = new Share<>(context, this);
    return share.wrap(delegate.createEnumerator(share));
  }

  @Override
  public SplitEnumerator<SplitT, EnumT> restoreEnumerator(
      SplitEnumeratorContext<SplitT> context, EnumT checkpoint) throws Exception {
    Share<SplitT> share = new Share<>(context, this);
    return share.wrap(delegate.restoreEnumerator(share, checkpoint));
  }

  /**
   * The context the delegate assigns through: it counts what this checkpoint's share handed out.
   */
  private static final class Share<SplitT extends SourceSplit>
      extends ForwardingEnumeratorContext<SplitT> {
    private final CheckpointShareSource<?, SplitT, ?> caps;
    private final Deque<Map.Entry<Integer, String>> waiting = new ArrayDeque<>();
    private int splits;
    private long bytes;

    Share(SplitEnumeratorContext<SplitT> delegate, CheckpointShareSource<?, SplitT, ?> caps) {
      super(delegate);
      this.caps = caps;
    }

    boolean full() {
      return caps.maxSplits > 0 && splits >= caps.maxSplits
          || caps.maxBytes > 0 && bytes >= caps.maxBytes;
    }

    @Override
    public void assignSplit(SplitT split, int subtask) {
      count(List.of(split));
      super.assignSplit(split, subtask);
    }

    @Override
    public void assignSplits(SplitsAssignment<SplitT> assignment) {
      assignment.assignment().values().forEach(this::count);
      super.assignSplits(assignment);
    }

    private void count(List<SplitT> assigned) {
      for (SplitT split : assigned) {
        splits++;
        bytes += caps.size.bytes(split);
      }
    }

    <EnumT> SplitEnumerator<SplitT, EnumT> wrap(SplitEnumerator<SplitT, EnumT> enumerator) {
      return new ForwardingSplitEnumerator<>(enumerator) {
        @Override
        public void addReader(int subtaskId) {
          // a new attempt of the reader asks again: its earlier attempt's request is void
          waiting.removeIf(request -> request.getKey() == subtaskId);
          delegate.addReader(subtaskId);
        }

        @Override
        public void handleSplitRequest(int subtaskId, String requesterHostname) {
          if (full() || !waiting.isEmpty()) {
            waiting.add(Map.entry(subtaskId, requesterHostname == null ? "" : requesterHostname));
            return;
          }
          delegate.handleSplitRequest(subtaskId, requesterHostname);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
          delegate.notifyCheckpointComplete(checkpointId);
          if (full()) {
            LOG.info(
                "Checkpoint {} completed: its share of {} splits and {} bytes ends; {} waiting requests go on",
                checkpointId,
                splits,
                bytes,
                waiting.size());
          }
          splits = 0;
          bytes = 0;
          while (!waiting.isEmpty() && !full()) {
            Map.Entry<Integer, String> next = waiting.poll();
            if (registeredReaders().containsKey(next.getKey())) {
              delegate.handleSplitRequest(
                  next.getKey(), next.getValue().isEmpty() ? null : next.getValue());
            }
          }
        }
      };
    }
  }
}
