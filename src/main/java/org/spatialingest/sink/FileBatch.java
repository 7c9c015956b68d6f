package org.spatialingest.sink;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SortOrder;

/**
 * The committable: data files closed by writers, to be committed together in one snapshot, with what the snapshot
 * summary records about them.
 *
 * @param checkpointId checkpoint the files belong to (set by the aggregator; writers leave it 0)
 * @param files closed data files
 * @param reasons why each file closed, parallel to {@code files}
 * @param bufferedBytes serialized bytes of the rows as they were buffered (to learn the encoding ratio)
 * @param minIngestMillis oldest Kafka timestamp of the rows
 * @param maxIngestMillis newest Kafka timestamp of the rows
 * @param createdAtMillis when the oldest part of the batch was created; bounds the duplicate check on recommit
 * @param specs the partition specs of the files, by id (so the committable can be read without the table)
 * @param sortOrders the sort orders of the files, by id
 */
public record FileBatch(
    long checkpointId,
    List<DataFile> files,
    List<CloseReason> reasons,
    long bufferedBytes,
    long minIngestMillis,
    long maxIngestMillis,
    long createdAtMillis,
    Map<Integer, PartitionSpec> specs,
    Map<Integer, SortOrder> sortOrders) {

  public FileBatch {
    if (files.size() != reasons.size()) {
      throw new IllegalArgumentException("one close reason per file expected");
    }
    files = List.copyOf(files);
    reasons = List.copyOf(reasons);
    specs = Map.copyOf(specs);
    sortOrders = Map.copyOf(sortOrders);
  }

  public long rowCount() {
    return files.stream().mapToLong(DataFile::recordCount).sum();
  }

  public long fileBytes() {
    return files.stream().mapToLong(DataFile::fileSizeInBytes).sum();
  }

  /** All parts as one batch of {@code checkpointId}. */
  public static FileBatch merge(long checkpointId, Collection<FileBatch> parts) {
    List<DataFile> files = new ArrayList<>();
    List<CloseReason> reasons = new ArrayList<>();
    long buffered = 0;
    long minIngest = Long.MAX_VALUE;
    long maxIngest = Long.MIN_VALUE;
    long created = Long.MAX_VALUE;
    Map<Integer, PartitionSpec> specs = new HashMap<>();
    Map<Integer, SortOrder> sortOrders = new HashMap<>();
    for (FileBatch part : parts) {
      files.addAll(part.files);
      reasons.addAll(part.reasons);
      buffered += part.bufferedBytes;
      minIngest = Math.min(minIngest, part.minIngestMillis);
      maxIngest = Math.max(maxIngest, part.maxIngestMillis);
      created = Math.min(created, part.createdAtMillis);
      specs.putAll(part.specs);
      sortOrders.putAll(part.sortOrders);
    }
    return new FileBatch(checkpointId, files, reasons, buffered, minIngest, maxIngest, created, specs, sortOrders);
  }
}
