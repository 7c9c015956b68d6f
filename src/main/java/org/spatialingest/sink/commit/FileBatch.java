package org.spatialingest.sink.commit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.io.FileIO;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.recovery.RestoreReconciler;

/**
 * The committable: the data files all writers closed for one checkpoint, committed together (one
 * snapshot per table that has files, the primary table last), with the source positions the primary
 * table's snapshot records.
 *
 * <p>The files are either in storage ({@link StoredBatch}: what the aggregator emits, so the
 * committable and the committer's state stay a few hundred bytes plus the positions) or, for a
 * batch restored from a state of an earlier build, inline.
 *
 * @param checkpointId the checkpoint whose barrier released the batch at the aggregator
 * @param lineage the sink lineage that produced the batch (see {@link RestoreReconciler})
 * @param stored where its closed files are; {@code null} for an inline batch
 * @param inline its closed files, for a batch of an earlier build's state; {@code null} if stored
 * @param positions per source key, the position below which every record is committed once this
 *     batch is
 */
@Internal
public record FileBatch(
    long checkpointId,
    String lineage,
    StoredBatch stored,
    ClosedFiles inline,
    Map<String, Long> positions) {

  public FileBatch {
    if ((stored == null) == (inline == null)) {
      throw new IllegalArgumentException("a batch is either stored or inline");
    }
    positions = Map.copyOf(positions);
  }

  /** A batch whose closed files are in storage. */
  public FileBatch(
      long checkpointId, String lineage, StoredBatch stored, Map<String, Long> positions) {
    this(checkpointId, lineage, stored, null, positions);
  }

  /** A batch whose closed files travel with it (as states of earlier builds held them). */
  public FileBatch(
      long checkpointId, String lineage, ClosedFiles inline, Map<String, Long> positions) {
    this(checkpointId, lineage, null, inline, positions);
  }

  public FileBatch(
      long checkpointId, String lineage, List<ClosedFile> files, Map<String, Long> positions) {
    this(checkpointId, lineage, ClosedFiles.of(files), positions);
  }

  /** The closed files: the inline ones, or read from storage through {@code io} (one read). */
  public ClosedFiles closed(FileIO io) {
    return inline != null ? inline : stored.read(io);
  }

  public int fileCount() {
    return inline != null ? inline.size() : stored.fileCount();
  }

  /**
   * When the oldest file of the batch was closed: the duplicate check on recommit looks back from
   * there.
   */
  public long createdAtMillis() {
    long oldest = inline != null ? inline.minClosedAtMillis() : stored.createdAtMillis();
    return oldest == Long.MAX_VALUE ? System.currentTimeMillis() : oldest;
  }

  /** The batch's identity ({@link #batchIdOf}), known without reading a stored batch's files. */
  public String batchId() {
    return inline != null ? batchIdOf(inline.locations()) : stored.batchId();
  }

  /**
   * A batch's identity: a digest of its sorted file paths. File names carry a per-writer-instance
   * token, so no two batches share an id; the committer's duplicate check and the restore
   * reconciliation rely on that.
   */
  public static String batchIdOf(List<String> locations) {
    List<String> paths = new java.util.ArrayList<>(locations);
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
