package org.spatialingest.sink.commit;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.GenericManifestFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.spatialingest.sink.core.ClosedFileManifests.AppendableGroup;
import org.spatialingest.sink.core.UnassignedManifest;

/**
 * A batch's closed files of one table as the fewest Iceberg manifests an append adopts as they are
 * ({@code AppendFiles.appendManifest} with snapshot-id inheritance, format 2 tables): the writers'
 * manifests of the batch (each an Avro container of the same schema and codec) are concatenated
 * block by block into one file, so no data file is decoded or encoded again on the committer's
 * thread and the manifest list grows by one entry per table and commit, not one per writer.
 * Writers' manifests with different headers (a schema change between them) go to one manifest per
 * header.
 *
 * <p>Cost: one streamed copy of the manifests' bytes, plus per writer manifest a merge of its
 * partition summaries.
 */
@Internal
final class BatchManifests {
  private static final byte[] MAGIC = {'O', 'b', 'j', 1};
  private static final int SYNC_SIZE = 16;

  private BatchManifests() {}

  /**
   * Writes the groups' manifests, concatenated, to {@code stem + "-<n>-m.avro"} (replacing files
   * there: a re-commit writes the same bytes) and returns them as an append adopts them.
   *
   * @param specs the table's partition specs by id; each group's must be among them
   * @param groups appendable groups of one table (the header, which names the partition spec,
   *     decides which are concatenated)
   */
  static List<ManifestFile> write(
      FileIO io, String stem, Map<Integer, PartitionSpec> specs, List<AppendableGroup> groups)
      throws IOException {
    Map<Header, List<Container>> byHeader = new LinkedHashMap<>();
    for (AppendableGroup g : groups) {
      if (!specs.containsKey(g.manifest().partitionSpecId())) {
        throw new IOException(
            "a writer's manifest has partition spec "
                + g.manifest().partitionSpecId()
                + ", which the table does not have");
      }
      Container c = Container.parse(g.manifestBytes());
      byHeader.computeIfAbsent(c.header(), h -> new ArrayList<>()).add(c.with(g.manifest()));
    }
    List<ManifestFile> written = new ArrayList<>(byHeader.size());
    int n = 0;
    for (List<Container> containers : byHeader.values()) {
      String location = stem + "-" + n++ + "-m.avro";
      long length = writeConcatenated(io, location, containers);
      PartitionSpec spec = specs.get(containers.get(0).manifest.partitionSpecId());
      written.add(describe(location, length, spec, containers));
    }
    return written;
  }

  private static long writeConcatenated(FileIO io, String location, List<Container> containers)
      throws IOException {
    Container first = containers.get(0);
    long length = 0;
    try (OutputStream out =
        new BufferedOutputStream(io.newOutputFile(location).createOrOverwrite(), 1 << 16)) {
      out.write(first.bytes, 0, first.blocksStart);
      length += first.blocksStart;
      byte[] sync = first.sync();
      for (Container c : containers) {
        for (int[] block : c.blocks) {
          out.write(c.bytes, block[0], block[1]);
          out.write(sync);
          length += block[1] + SYNC_SIZE;
        }
      }
    }
    return length;
  }

  private static ManifestFile describe(
      String location, long length, PartitionSpec spec, List<Container> containers) {
    int files = 0;
    long rows = 0;
    List<ManifestFile.PartitionFieldSummary> partitions = null;
    for (Container c : containers) {
      ManifestFile m = c.manifest;
      files += m.addedFilesCount();
      rows += m.addedRowsCount();
      partitions = partitions == null ? m.partitions() : merge(spec, partitions, m.partitions());
    }
    // as Iceberg's own class: a commit recognizes the manifests it committed by equality (a path),
    // and deletes an appended manifest it does not recognize
    return GenericManifestFile.copyOf(
            new UnassignedManifest(location, length, spec.specId(), null, files, rows, partitions))
        .build();
  }

  /** The summaries of two manifests' partitions as one: either contains, bounds widened. */
  private static List<ManifestFile.PartitionFieldSummary> merge(
      PartitionSpec spec,
      List<ManifestFile.PartitionFieldSummary> a,
      List<ManifestFile.PartitionFieldSummary> b) {
    if (a == null || b == null) {
      return null; // unknown stays unknown: a reader then plans the manifest for every filter
    }
    List<ManifestFile.PartitionFieldSummary> merged = new ArrayList<>(a.size());
    for (int i = 0; i < a.size(); i++) {
      Type type = spec.partitionType().fields().get(i).type();
      ManifestFile.PartitionFieldSummary x = a.get(i);
      ManifestFile.PartitionFieldSummary y = b.get(i);
      Boolean nan =
          x.containsNaN() == null || y.containsNaN() == null
              ? null
              : x.containsNaN() || y.containsNaN();
      merged.add(
          new UnassignedManifest.FieldSummary(
              x.containsNull() || y.containsNull(),
              nan,
              bound(type, x.lowerBound(), y.lowerBound(), -1),
              bound(type, x.upperBound(), y.upperBound(), 1)));
    }
    return merged;
  }

  /** The lower ({@code sign} -1) or upper (1) of two serialized bounds; null where none is. */
  private static ByteBuffer bound(Type type, ByteBuffer x, ByteBuffer y, int sign) {
    if (x == null || y == null) {
      return x == null ? y : x;
    }
    Comparator<Object> order = Comparators.forType(type.asPrimitiveType());
    Object vx = Conversions.fromByteBuffer(type, x.duplicate());
    Object vy = Conversions.fromByteBuffer(type, y.duplicate());
    return Integer.signum(order.compare(vy, vx)) == sign ? y : x;
  }

  /** The metadata of an Avro container (schema, codec, Iceberg's keys), between magic and sync. */
  private record Header(byte[] bytes) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Header h && Arrays.equals(bytes, h.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }
  }

  /**
   * An Avro object container file's layout: header (magic, metadata map, 16-byte sync marker), then
   * blocks (object count, byte size, the objects, the sync marker).
   */
  private static final class Container {
    final byte[] bytes;
    final int blocksStart;

    /** per block: start, length up to (not including) its sync marker */
    final List<int[]> blocks;

    ManifestFile manifest;

    private Container(byte[] bytes, int blocksStart, List<int[]> blocks) {
      this.bytes = bytes;
      this.blocksStart = blocksStart;
      this.blocks = blocks;
    }

    Container with(ManifestFile descriptor) {
      this.manifest = descriptor;
      return this;
    }

    Header header() {
      return new Header(Arrays.copyOfRange(bytes, MAGIC.length, blocksStart - SYNC_SIZE));
    }

    byte[] sync() {
      return Arrays.copyOfRange(bytes, blocksStart - SYNC_SIZE, blocksStart);
    }

    static Container parse(byte[] bytes) throws IOException {
      if (bytes.length < MAGIC.length + SYNC_SIZE
          || !Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
        throw new IOException("a writer's manifest is not an Avro container file");
      }
      int[] pos = {MAGIC.length};
      // the metadata map: blocks of entries (string key, bytes value), ended by a count of 0
      for (long count = readLong(bytes, pos); count != 0; count = readLong(bytes, pos)) {
        if (count < 0) {
          count = -count;
          readLong(bytes, pos); // the block's byte size
        }
        for (long i = 0; i < count; i++) {
          skip(bytes, pos, readLong(bytes, pos)); // key
          skip(bytes, pos, readLong(bytes, pos)); // value
        }
      }
      int syncAt = pos[0];
      skip(bytes, pos, SYNC_SIZE);
      int blocksStart = pos[0];
      List<int[]> blocks = new ArrayList<>();
      while (pos[0] < bytes.length) {
        int start = pos[0];
        readLong(bytes, pos); // object count
        skip(bytes, pos, readLong(bytes, pos));
        int length = pos[0] - start;
        if (!Arrays.equals(bytes, pos[0], pos[0] + SYNC_SIZE, bytes, syncAt, syncAt + SYNC_SIZE)) {
          throw new IOException("a writer's manifest has a block without its sync marker");
        }
        skip(bytes, pos, SYNC_SIZE);
        blocks.add(new int[] {start, length});
      }
      return new Container(bytes, blocksStart, blocks);
    }

    /** Avro's zig-zag variable-length long. */
    private static long readLong(byte[] bytes, int[] pos) throws IOException {
      long raw = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (pos[0] >= bytes.length) {
          throw new IOException("a writer's manifest ends inside a number");
        }
        int b = bytes[pos[0]++] & 0xff;
        raw |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return (raw >>> 1) ^ -(raw & 1);
        }
      }
      throw new IOException("a writer's manifest has a malformed number");
    }

    private static void skip(byte[] bytes, int[] pos, long n) throws IOException {
      if (n < 0 || pos[0] + n > bytes.length) {
        throw new IOException("a writer's manifest is cut short");
      }
      pos[0] += (int) n;
    }
  }
}
