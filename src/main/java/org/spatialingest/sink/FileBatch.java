package org.spatialingest.sink;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
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
 * @param lineage the sink lineage that produced the batch (set by the aggregator; see {@link RestoreReconciler})
 * @param ingestSecondCounts rows per ingest second (epoch seconds), for the row-age-at-commit histogram
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
    Map<Integer, SortOrder> sortOrders,
    String lineage,
    Map<Long, Long> ingestSecondCounts) {

  public FileBatch {
    if (files.size() != reasons.size()) {
      throw new IllegalArgumentException("one close reason per file expected");
    }
    files = List.copyOf(files);
    reasons = List.copyOf(reasons);
    specs = Map.copyOf(specs);
    sortOrders = Map.copyOf(sortOrders);
    ingestSecondCounts = Map.copyOf(ingestSecondCounts);
  }

  public long rowCount() {
    return files.stream().mapToLong(DataFile::recordCount).sum();
  }

  public long fileBytes() {
    return files.stream().mapToLong(DataFile::fileSizeInBytes).sum();
  }

  /**
   * The batch's identity: a digest of its sorted file paths. File names carry a per-writer-instance UUID, so no two
   * batches share an id; the committer's duplicate check and the restore reconciliation rely on that.
   */
  public String batchId() {
    List<String> paths = new ArrayList<>();
    for (DataFile f : files) {
      paths.add(f.location());
    }
    paths.sort(null);
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (String p : paths) {
        digest.update(p.getBytes(StandardCharsets.UTF_8));
        digest.update((byte) '\n');
      }
      return HexFormat.of().formatHex(digest.digest(), 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }

  /** All parts as one batch of {@code checkpointId} and {@code lineage}. */
  public static FileBatch merge(long checkpointId, String lineage, Collection<FileBatch> parts) {
    List<DataFile> files = new ArrayList<>();
    List<CloseReason> reasons = new ArrayList<>();
    long buffered = 0;
    long minIngest = Long.MAX_VALUE;
    long maxIngest = Long.MIN_VALUE;
    long created = Long.MAX_VALUE;
    Map<Integer, PartitionSpec> specs = new HashMap<>();
    Map<Integer, SortOrder> sortOrders = new HashMap<>();
    IngestTimeCounts ingestTimes = new IngestTimeCounts();
    for (FileBatch part : parts) {
      files.addAll(part.files);
      reasons.addAll(part.reasons);
      buffered += part.bufferedBytes;
      minIngest = Math.min(minIngest, part.minIngestMillis);
      maxIngest = Math.max(maxIngest, part.maxIngestMillis);
      created = Math.min(created, part.createdAtMillis);
      specs.putAll(part.specs);
      sortOrders.putAll(part.sortOrders);
      ingestTimes.addAll(part.ingestSecondCounts);
    }
    return new FileBatch(checkpointId, files, reasons, buffered, minIngest, maxIngest, created, specs, sortOrders,
        lineage, ingestTimes.toMap());
  }
}
