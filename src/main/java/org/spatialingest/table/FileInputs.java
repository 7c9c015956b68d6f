package org.spatialingest.table;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.GenericBlobMetadata;
import org.apache.iceberg.GenericStatisticsFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.puffin.Blob;
import org.apache.iceberg.puffin.BlobMetadata;
import org.apache.iceberg.puffin.Puffin;
import org.apache.iceberg.puffin.PuffinCompressionCodec;
import org.apache.iceberg.puffin.PuffinReader;
import org.apache.iceberg.puffin.PuffinWriter;
import org.apache.iceberg.util.Pair;

/**
 * The fingerprints of the input files a sink read ({@code source: file:<path>}), the one owner of
 * their format: per file path, the byte length of the prefix the sink read and a 64-bit hash of
 * those bytes ({@link #hash}: CRC-32C and CRC-32 side by side), whether that prefix ended with a
 * newline, and the paths whose committed lines count for this file too (it was recognised as one of
 * them moved). The lines read are all inside that prefix, so "the file still starts with these
 * bytes" proves a pure append.
 *
 * <p>Where they live: a Puffin file ({@value #BLOB_TYPE} blob, zstd) in the table's {@code
 * metadata/} folder, written once per start, registered as a statistics file of every snapshot the
 * sink commits (so Iceberg's orphan-file removal keeps it and snapshot expiry removes it with the
 * last snapshot naming it), and named by the summary key {@link SnapshotSummaryKeys#FILE_INPUTS} (a
 * path, so the summary stays small however many files: 10,000 files are about 10,000 × (path + 40)
 * bytes of JSON before compression). Engines skip blob types they do not know.
 *
 * @param files per path, its fingerprint
 */
public record FileInputs(Map<String, Fingerprint> files) implements Serializable {
  /** The Puffin blob type of the fingerprints. */
  public static final String BLOB_TYPE = "spatial-ingest-file-inputs-v1";

  private static final ObjectMapper JSON = new ObjectMapper();

  public FileInputs {
    files = Map.copyOf(files);
  }

  public static FileInputs none() {
    return new FileInputs(Map.of());
  }

  public boolean isEmpty() {
    return files.isEmpty();
  }

  /**
   * The source keys ({@code file:<path>}) whose committed lines are these files' lines: each file's
   * own and the earlier paths of the files that moved.
   */
  public Set<String> sourceKeys() {
    Set<String> keys = new HashSet<>();
    for (Fingerprint f : files.values()) {
      keys.add(SourceKeys.file(f.path()));
      keys.addAll(f.aliases());
    }
    return keys;
  }

  /**
   * One file as a sink read it.
   *
   * @param length bytes of the prefix read (up to and including its last newline, or the whole file
   *     when an unterminated last line was read too)
   * @param hash {@link #hash} of those bytes
   * @param terminated whether the prefix ends with a newline (or is empty)
   * @param aliases source keys ({@code file:<path>}) of earlier paths of this file, whose committed
   *     lines are its lines
   */
  public record Fingerprint(
      String path, long length, long hash, boolean terminated, List<String> aliases)
      implements Serializable {
    public Fingerprint {
      aliases = List.copyOf(aliases);
    }
  }

  /** The 64-bit hash of a fingerprint: CRC-32C in the high half, CRC-32 in the low half. */
  public static long hash(java.util.zip.CRC32C crc32c, java.util.zip.CRC32 crc32) {
    return crc32c.getValue() << 32 | crc32.getValue();
  }

  /** A Puffin file written for a sink's commits: where it is and what a statistics file needs. */
  public record Written(String location, long fileSize, long footerSize, String blobType)
      implements Serializable {
    /** The statistics file that registers it for snapshot {@code snapshotId}. */
    public StatisticsFile forSnapshot(long snapshotId) {
      return new GenericStatisticsFile(
          snapshotId,
          location,
          fileSize,
          footerSize,
          List.of(new GenericBlobMetadata(blobType, snapshotId, -1, List.of(), Map.of())));
    }

    /**
     * Registers it as a statistics file of the snapshot {@code tx}'s last update made (a snapshot
     * has one statistics file; this sink's snapshots have no other).
     */
    public void register(Transaction tx) {
      long id = tx.table().currentSnapshot().snapshotId();
      tx.updateStatistics().setStatistics(forSnapshot(id)).commit();
    }
  }

  /** Writes these fingerprints as a Puffin file in {@code table}'s metadata folder. */
  public Written write(Table table, String sinkId) {
    ArrayNode array = JSON.createArrayNode();
    new TreeMap<>(files)
        .values()
        .forEach(
            f -> {
              ObjectNode o = array.addObject();
              o.put("path", f.path());
              o.put("length", f.length());
              o.put("hash", Long.toHexString(f.hash()));
              o.put("terminated", f.terminated());
              if (!f.aliases().isEmpty()) {
                ArrayNode a = o.putArray("aliases");
                f.aliases().forEach(a::add);
              }
            });
    String name = "spatial-ingest-file-inputs-" + sinkId + "-" + UUID.randomUUID() + ".puffin";
    String location =
        table instanceof HasTableOperations ops
            ? ops.operations().metadataFileLocation(name)
            : table.location() + "/metadata/" + name;
    try (PuffinWriter writer =
        Puffin.write(table.io().newOutputFile(location))
            .createdBy("spatial-ingest")
            .compressBlobs(PuffinCompressionCodec.ZSTD)
            .build()) {
      writer.add(
          new Blob(
              BLOB_TYPE,
              List.of(),
              -1,
              -1,
              ByteBuffer.wrap(array.toString().getBytes(StandardCharsets.UTF_8))));
      writer.finish();
      return new Written(location, writer.fileSize(), writer.footerSize(), BLOB_TYPE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The fingerprints the summary of {@code snapshot} names ({@link
   * SnapshotSummaryKeys#FILE_INPUTS}); none when it names none (a table written before
   * fingerprints, or by a Kafka job).
   *
   * @throws PositionsRefusedException when it names a file that cannot be read
   */
  public static FileInputs read(Table table, Snapshot snapshot) {
    String location =
        snapshot == null ? null : snapshot.summary().get(SnapshotSummaryKeys.FILE_INPUTS);
    if (location == null) {
      return none();
    }
    try (PuffinReader reader = Puffin.read(table.io().newInputFile(location)).build()) {
      List<BlobMetadata> blobs = new ArrayList<>();
      for (BlobMetadata b : reader.fileMetadata().blobs()) {
        if (BLOB_TYPE.equals(b.type())) {
          blobs.add(b);
        }
      }
      Map<String, Fingerprint> files = new TreeMap<>();
      for (Pair<BlobMetadata, ByteBuffer> blob : reader.readAll(blobs)) {
        ByteBuffer data = blob.second();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        for (JsonNode o : JSON.readTree(bytes)) {
          List<String> aliases = new ArrayList<>();
          o.path("aliases").forEach(a -> aliases.add(a.asText()));
          String path = o.get("path").asText();
          files.put(
              path,
              new Fingerprint(
                  path,
                  o.get("length").asLong(),
                  Long.parseUnsignedLong(o.get("hash").asText(), 16),
                  o.get("terminated").asBoolean(),
                  aliases));
        }
      }
      return new FileInputs(files);
    } catch (IOException | RuntimeException e) {
      throw new PositionsRefusedException(
          "the fingerprints of the input files of snapshot "
              + snapshot.snapshotId()
              + " of "
              + table.name()
              + " cannot be read from "
              + location
              + " ("
              + e
              + "): the job cannot tell which files changed. Way out: restore that file, or start "
              + "with another sink.id (reads every file again)");
    }
  }
}
