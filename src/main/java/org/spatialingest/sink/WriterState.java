package org.spatialingest.sink;

import java.util.List;

/**
 * What a writer checkpoints: the rows it buffers but has not yet written to a data file, in their serialized
 * {@code RowData} form. Partition, Hilbert key and ingest time are recomputed from the rows on restore, so nothing
 * derived is stored twice. Bounded by the memory budget M of the writer.
 */
public record WriterState(List<byte[]> rows) {
  public WriterState {
    rows = List.copyOf(rows);
  }
}
