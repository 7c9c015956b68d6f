package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.spatialingest.sink.core.RowBatch;

/**
 * Collects placed rows, serialized as their writer buffers them, into one batch per partition and
 * buffer id, and hands a batch to its {@link Output} (one {@link RowBatch}) when it holds {@link
 * #BATCH_BYTES}, when the row's slot differs from the batch's, when all batches together hold
 * {@link #PENDING_BYTES} (then all go), and when its owner calls {@link #sendAll} (before each
 * checkpoint barrier and at the end of input: no row crosses a barrier in a batch, so nothing here
 * is state).
 *
 * <p>Cost per row: its serialization into the batch's buffer; a send copies the batch's bytes once.
 * Memory: at most {@link #PENDING_BYTES} of rows plus one buffer of {@link #BATCH_BYTES} per
 * partition and buffer id in use. Not thread-safe (the task thread).
 */
final class RowBatcher {
  /**
   * A batch is sent once it holds this many bytes: per-record costs of the exchange are paid once
   * per tens of point rows, and a batch of small rows fits one network buffer (32 KB).
   */
  static final int BATCH_BYTES = 16 << 10;

  /** All batches are sent once they hold this many bytes together. */
  static final int PENDING_BYTES = 1 << 20;

  /** Where a full batch goes. */
  interface Output {
    /**
     * One batch: {@code rowCount} rows of table {@code table} (partition spec {@code specId},
     * writer buffer {@code bufferId}) for writer slot {@code slot}, serialized back to back; {@code
     * rows} is the receiver's own copy.
     */
    void send(int slot, int table, int specId, int bufferId, byte[] rows, int rowCount);
  }

  private final List<RowDataSerializer> serializers;
  private final Output output;

  /** batches holding rows (and some emptied since), in the order they were first filled */
  private final List<Batch> pending = new ArrayList<>();

  private long pendingBytes;

  /**
   * @param serializers per table of the sink (in its order), the serializer of its rows
   */
  RowBatcher(List<RowDataSerializer> serializers, Output output) {
    this.serializers = serializers;
    this.output = output;
  }

  /** The batches of one partition of table {@code table}, empty. */
  PartitionBatches forPartition(int table, int specId) {
    return new PartitionBatches(table, specId, serializers.get(table));
  }

  /**
   * Adds {@code row} to {@code partition}'s batch for {@code bufferId}, bound for {@code slot} (the
   * batch goes first if it holds rows for another slot), and sends what is due.
   */
  void add(PartitionBatches partition, int bufferId, int slot, RowData row) {
    Batch batch = partition.batch(bufferId);
    if (batch.rows.length() > 0 && batch.slot != slot) {
      send(batch);
    }
    batch.slot = slot;
    if (!batch.queued) {
      batch.queued = true;
      pending.add(batch);
    }
    int before = batch.rows.length();
    try {
      partition.serializer.serialize(row, batch.rows);
    } catch (IOException e) {
      throw new UncheckedIOException("serializing a row for its writer", e);
    }
    pendingBytes += batch.rows.length() - before;
    batch.count++;
    if (batch.rows.length() >= BATCH_BYTES) {
      send(batch);
    }
    if (pendingBytes >= PENDING_BYTES) {
      sendAll();
    }
  }

  /** Sends every batch that holds rows. */
  void sendAll() {
    for (Batch batch : pending) {
      send(batch);
      batch.queued = false;
    }
    pending.clear();
  }

  /** Sends {@code partition}'s batches that hold rows (before its placement forgets it). */
  void sendAll(PartitionBatches partition) {
    for (Batch batch : partition.byBufferId) {
      if (batch != null) {
        send(batch);
      }
    }
  }

  /** Bytes of rows in all batches not sent yet. */
  long pendingBytes() {
    return pendingBytes;
  }

  private void send(Batch batch) {
    if (batch.rows.length() == 0) {
      return;
    }
    output.send(
        batch.slot,
        batch.table,
        batch.specId,
        batch.bufferId,
        batch.rows.getCopyOfBuffer(),
        batch.count);
    pendingBytes -= batch.rows.length();
    batch.rows.clear();
    batch.count = 0;
  }

  /** The batches of one partition, by buffer id. */
  static final class PartitionBatches {
    private final int table;
    private final int specId;
    private final RowDataSerializer serializer;
    private Batch[] byBufferId = new Batch[0];

    private PartitionBatches(int table, int specId, RowDataSerializer serializer) {
      this.table = table;
      this.specId = specId;
      this.serializer = serializer;
    }

    private Batch batch(int bufferId) {
      if (bufferId >= byBufferId.length) {
        byBufferId = Arrays.copyOf(byBufferId, bufferId + 1);
      }
      Batch batch = byBufferId[bufferId];
      if (batch == null) {
        batch = new Batch(table, specId, bufferId);
        byBufferId[bufferId] = batch;
      }
      return batch;
    }
  }

  /** The rows of one partition and buffer id not yet sent, as their writer buffers them. */
  private static final class Batch {
    final DataOutputSerializer rows = new DataOutputSerializer(BATCH_BYTES + 1024);
    final int table;
    final int specId;
    final int bufferId;
    int slot;

    /** rows in {@link #rows} */
    int count;

    /** in {@link RowBatcher#pending} */
    boolean queued;

    Batch(int table, int specId, int bufferId) {
      this.table = table;
      this.specId = specId;
      this.bufferId = bufferId;
    }
  }
}
