package org.spatialingest.sink.commit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.recovery.RestoreReconciler;

/**
 * The committable: the data files all writers closed for one checkpoint, committed together (one
 * snapshot per table that has files, the primary table last), with the source positions the primary
 * table's snapshot records.
 *
 * @param checkpointId the checkpoint whose barrier released the batch at the aggregator
 * @param lineage the sink lineage that produced the batch (see {@link RestoreReconciler})
 * @param closed the closed files, of every table (decoded only by {@link #files()})
 * @param positions per source key, the position below which every record is committed once this
 *     batch is
 */
@Internal
public record FileBatch(
    long checkpointId, String lineage, ClosedFiles closed, Map<String, Long> positions) {

  public FileBatch {
    positions = Map.copyOf(positions);
  }

  public FileBatch(
      long checkpointId, String lineage, List<ClosedFile> files, Map<String, Long> positions) {
    this(checkpointId, lineage, ClosedFiles.of(files), positions);
  }

  /** The closed files, decoded (once: {@link ClosedFiles}). */
  public List<ClosedFile> files() {
    return closed.files();
  }

  public List<ClosedFile> filesOf(int table) {
    return files().stream().filter(f -> f.table() == table).toList();
  }

  public long rowCount(int table) {
    return filesOf(table).stream().mapToLong(f -> f.file().recordCount()).sum();
  }

  public long minIngestMillis() {
    return files().stream().mapToLong(ClosedFile::minIngestMillis).min().orElse(Long.MAX_VALUE);
  }

  public long maxIngestMillis() {
    return files().stream().mapToLong(ClosedFile::maxIngestMillis).max().orElse(Long.MIN_VALUE);
  }

  /**
   * When the oldest file of the batch was closed: the duplicate check on recommit looks back from
   * there.
   */
  public long createdAtMillis() {
    return files().stream()
        .mapToLong(ClosedFile::closedAtMillis)
        .min()
        .orElse(System.currentTimeMillis());
  }

  /**
   * The batch's identity: a digest of its sorted file paths. File names carry a per-writer-instance
   * token, so no two batches share an id; the committer's duplicate check and the restore
   * reconciliation rely on that.
   */
  public String batchId() {
    List<String> paths = closed.locations();
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
}
