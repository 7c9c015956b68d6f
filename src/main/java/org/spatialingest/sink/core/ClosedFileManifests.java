package org.spatialingest.sink.core;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.avro.Avro;
import org.apache.iceberg.avro.AvroIterable;
import org.apache.iceberg.inmemory.InMemoryInputFile;
import org.apache.iceberg.inmemory.InMemoryOutputFile;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types;

/**
 * Binary form of {@link ClosedFile}s and string-to-long maps, shared by the sink's versioned
 * serializers. The {@link DataFile}s travel as Iceberg manifests, in memory: Iceberg's own
 * versioned Avro format (as in Iceberg's Flink sink, whose committable carries manifests), so a
 * state survives an Iceberg upgrade that changes the data file classes. Each manifest records its
 * partition spec and schema, so no table is needed to read it back.
 *
 * <p>A group of files of one table and spec ({@link #encodeGroup}): {@link #APPENDABLE_LAYOUT},
 * table index, file count, the files' locations, their total bytes and rows, per file what the sink
 * adds to it (reason, bytes buffered, ingest times, staging runs), then the manifest's descriptor
 * ({@link UnassignedManifest#write}) and bytes, files in the same order. {@link ClosedFiles} passes
 * a group on as these bytes. Groups of builds up to 2520cf2 start with the table index (never
 * negative), have no totals, and carry Iceberg's descriptor ({@link ManifestFiles#encode}); their
 * manifests name snapshot 0.
 *
 * <p>The manifest leaves the snapshot id unassigned (null, as Iceberg's {@code
 * AppendFiles.appendManifest} requires to adopt a manifest as it is): the committer concatenates
 * the groups' manifests of a table into one ({@link AppendableGroup}, {@code
 * commit.BatchManifests}) and appends it without decoding a data file.
 */
@Internal
public final class ClosedFileManifests {
  /**
   * Iceberg's own Flink sink writes its in-flight manifests as v2 too; a table of format 2 adopts
   * them as they are, other formats re-add their files.
   */
  public static final int MANIFEST_FORMAT_VERSION = 2;

  /**
   * A manifest descriptor must name a snapshot to be read back; reading assigns it to entries
   * without one (the commit assigns the real one). Manifests of groups before {@link
   * #APPENDABLE_LAYOUT} carry it in every entry.
   */
  private static final long UNCOMMITTED_SNAPSHOT_ID = 0L;

  /**
   * First int of a group whose manifest leaves snapshot ids unassigned and whose header carries the
   * files' total bytes and rows (the earlier layout starts with the table index, never negative).
   */
  private static final int APPENDABLE_LAYOUT = -2;

  private static final String IN_MEMORY_PATH = "memory:/closed-files.avro";

  /** Any projection opens the file; only its header is read. */
  private static final Schema HEADER_PROJECTION =
      new Schema(Types.NestedField.required(0, "status", Types.IntegerType.get()));

  private ClosedFileManifests() {}

  /**
   * One group's binary form (the current layout): table index, file count, the files' locations
   * (what the aggregator needs, read without the manifest), per file what the sink adds to it, then
   * the manifest's descriptor and bytes. Every file must have the same table and partition spec.
   */
  public static byte[] encodeGroup(List<ClosedFile> group) throws IOException {
    ClosedFile first = group.get(0);
    DataOutputSerializer out = new DataOutputSerializer(2048 + 512 * group.size());
    out.writeInt(APPENDABLE_LAYOUT);
    out.writeInt(first.table());
    out.writeInt(group.size());
    long bytes = 0;
    long rows = 0;
    for (ClosedFile f : group) {
      out.writeUTF(f.file().location());
      bytes += f.file().fileSizeInBytes();
      rows += f.file().recordCount();
    }
    out.writeLong(bytes);
    out.writeLong(rows);
    for (ClosedFile f : group) {
      writeSinkFields(f, out);
    }
    writeManifest(group, out);
    return out.getCopyOfBuffer();
  }

  /** The table index and file locations of a group written by {@link #encodeGroup}. */
  public static GroupHeader readGroupHeader(byte[] group) throws IOException {
    return readGroupHeader(new DataInputDeserializer(group));
  }

  private static GroupHeader readGroupHeader(DataInputView in) throws IOException {
    int first = in.readInt();
    boolean appendable = first == APPENDABLE_LAYOUT;
    if (first < 0 && !appendable) {
      throw new IOException("a group of closed files has an unknown layout " + first);
    }
    int table = appendable ? in.readInt() : first;
    int count = in.readInt();
    List<String> locations = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      locations.add(in.readUTF());
    }
    long bytes = appendable ? in.readLong() : -1;
    long rows = appendable ? in.readLong() : -1;
    return new GroupHeader(table, locations, appendable, bytes, rows);
  }

  /**
   * When the oldest file of a group written by {@link #encodeGroup} was closed; reads the sink's
   * fields, not the manifest.
   */
  public static long minClosedAtMillis(byte[] group) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(group);
    GroupHeader header = readGroupHeader(in);
    long min = Long.MAX_VALUE;
    for (int i = 0; i < header.locations().size(); i++) {
      // the fields as writeSinkFields wrote them, skipping what is not needed (no maps built)
      in.readUTF(); // reason
      in.skipBytesToRead(3 * Long.BYTES); // buffered bytes, min and max ingest
      min = Math.min(min, in.readLong());
      in.skipBytesToRead(in.readInt() * 2 * Long.BYTES); // ingest second counts
      int staged = in.readInt();
      for (int s = 0; s < staged; s++) {
        in.skipBytesToRead(in.readUnsignedShort()); // a modified-UTF-8 string: length, bytes
      }
    }
    return min;
  }

  /**
   * The table index and file locations of a group, in manifest order.
   *
   * @param appendable whether its manifest can be appended as it is (then {@code fileBytes} and
   *     {@code rows} are its files' totals, else -1)
   */
  public record GroupHeader(
      int table, List<String> locations, boolean appendable, long fileBytes, long rows) {}

  /**
   * A group whose manifest an append can adopt: its files' sink fields summed, its totals, and the
   * manifest as the writer encoded it.
   *
   * @param manifest the writer's descriptor (path and length of the in-memory copy; counts and
   *     partition summaries are the files'; nothing assigned)
   * @param manifestBytes the manifest's Avro bytes
   */
  public record AppendableGroup(
      GroupHeader header,
      SinkFieldTotals sinkFields,
      UnassignedManifest manifest,
      byte[] manifestBytes) {}

  /** A manifest's descriptor and Avro bytes. */
  private record Described(UnassignedManifest manifest, byte[] bytes) {}

  private static Described readDescribed(DataInputView in) throws IOException {
    UnassignedManifest described = UnassignedManifest.read(in, IN_MEMORY_PATH, 0);
    byte[] bytes = readBytes(in);
    return new Described(described.at(IN_MEMORY_PATH, bytes.length), bytes);
  }

  /**
   * The sink's fields, totals and manifest of a group written by {@link #encodeGroup}, or {@code
   * null} if it was written in the earlier layout (its manifests name a snapshot; decode it
   * instead). Reads no data file: costs a pass over the sink's fields and a copy of the manifest.
   */
  public static AppendableGroup readAppendable(byte[] group) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(group);
    GroupHeader header = readGroupHeader(in);
    if (!header.appendable()) {
      return null;
    }
    SinkFieldTotals fields = new SinkFieldTotals();
    for (int i = 0; i < header.locations().size(); i++) {
      readSinkFieldsInto(in, fields);
    }
    Described d = readDescribed(in);
    return new AppendableGroup(header, fields, d.manifest(), d.bytes());
  }

  /** The files of a group written by {@link #encodeGroup}, in its order. */
  public static List<ClosedFile> decodeGroup(byte[] group) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer(group);
    GroupHeader header = readGroupHeader(in);
    int count = header.locations().size();
    List<SinkFields> sinkFields = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      sinkFields.add(readSinkFields(in));
    }
    Manifest manifest;
    if (header.appendable()) {
      Described d = readDescribed(in);
      manifest = readManifest(d.manifest().withSnapshotId(UNCOMMITTED_SNAPSHOT_ID), d.bytes());
      manifest.requireFiles(count);
    } else {
      manifest = readManifest(in, count);
    }
    List<ClosedFile> files = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      DataFile file = manifest.files().get(i);
      if (!file.location().equals(header.locations().get(i))) {
        throw new IOException(
            "a group of closed files lists "
                + header.locations().get(i)
                + " where its manifest holds "
                + file.location());
      }
      files.add(sinkFields.get(i).of(header.table(), file, manifest.spec()));
    }
    return files;
  }

  /**
   * The manifest of a group (one table, one spec): its {@link UnassignedManifest} descriptor, then
   * the Avro bytes.
   */
  private static void writeManifest(List<ClosedFile> group, DataOutputView out) throws IOException {
    InMemoryOutputFile manifestOut = new InMemoryOutputFile(IN_MEMORY_PATH);
    ManifestWriter<DataFile> writer =
        ManifestFiles.write(MANIFEST_FORMAT_VERSION, group.get(0).spec(), manifestOut, null);
    try (writer) {
      for (ClosedFile f : group) {
        writer.add(f.file());
      }
    }
    UnassignedManifest.of(writer.toManifestFile()).write(out);
    writeBytes(manifestOut.toByteArray(), out);
  }

  /** A manifest's data files and the partition spec they were written with. */
  public record Manifest(PartitionSpec spec, List<DataFile> files) {
    /** This manifest, if it holds {@code expectedFiles} files (as the state around it says). */
    public Manifest requireFiles(int expectedFiles) throws IOException {
      if (expectedFiles != files.size()) {
        throw new IOException(
            "a manifest in the sink's state holds "
                + files.size()
                + " files, expected "
                + expectedFiles);
      }
      return this;
    }
  }

  private static Manifest readManifest(DataInputView in, int expectedFiles) throws IOException {
    return readManifest(in).requireFiles(expectedFiles);
  }

  /**
   * A manifest's descriptor ({@link ManifestFiles#encode}) and bytes, read back into its files and
   * their partition spec: the form of groups before {@link #APPENDABLE_LAYOUT} and of {@code
   * FileBatch} version 3.
   */
  public static Manifest readManifest(DataInputView in) throws IOException {
    ManifestFile manifest = ManifestFiles.decode(readBytes(in));
    return readManifest(manifest, readBytes(in));
  }

  /** A manifest's files, read from its bytes with its descriptor (which must name a snapshot). */
  private static Manifest readManifest(ManifestFile manifest, byte[] bytes) throws IOException {
    List<DataFile> dataFiles = new ArrayList<>();
    OneFileIO io = new OneFileIO(manifest.path(), bytes);
    PartitionSpec spec = specOf(io.newInputFile(manifest.path()));
    try (ManifestReader<DataFile> reader =
        ManifestFiles.read(manifest, io, Map.of(spec.specId(), spec))) {
      for (DataFile file : reader) {
        dataFiles.add(file.copy());
      }
    }
    return new Manifest(spec, dataFiles);
  }

  private static void writeSinkFields(ClosedFile f, DataOutputView out) throws IOException {
    out.writeUTF(f.reason().name());
    out.writeLong(f.bufferedBytes());
    out.writeLong(f.minIngestMillis());
    out.writeLong(f.maxIngestMillis());
    out.writeLong(f.closedAtMillis());
    out.writeInt(f.ingestSecondCounts().size());
    for (Map.Entry<Long, Long> e : f.ingestSecondCounts().entrySet()) {
      out.writeLong(e.getKey());
      out.writeLong(e.getValue());
    }
    out.writeInt(f.consumedStaging().size());
    for (String path : f.consumedStaging()) {
      out.writeUTF(path);
    }
  }

  /** Adds one file's sink fields, as {@link #writeSinkFields} wrote them, to {@code totals}. */
  private static void readSinkFieldsInto(DataInputView in, SinkFieldTotals totals)
      throws IOException {
    CloseReason reason = CloseReason.valueOf(in.readUTF());
    long buffered = in.readLong();
    long minIngest = in.readLong();
    long maxIngest = in.readLong();
    in.readLong(); // closed at
    totals.file(reason, buffered, minIngest, maxIngest);
    int seconds = in.readInt();
    for (int s = 0; s < seconds; s++) {
      totals.ingestSecond(in.readLong(), in.readLong());
    }
    int staged = in.readInt();
    for (int s = 0; s < staged; s++) {
      totals.staging(in.readUTF());
    }
  }

  /**
   * Reads what the sink adds to one data file (written by {@link #encodeGroup} before the manifest;
   * the retired formats the compat room reads have the same fields after each manifest or file).
   *
   * @param spec the file's partition spec
   */
  public static ClosedFile readSinkFields(
      DataInputView in, int table, DataFile file, PartitionSpec spec) throws IOException {
    return readSinkFields(in).of(table, file, spec);
  }

  /** What the sink adds to a data file, read before the file itself. */
  private record SinkFields(
      CloseReason reason,
      long buffered,
      long minIngest,
      long maxIngest,
      long closedAt,
      Map<Long, Long> ingestSeconds,
      List<String> consumed) {
    ClosedFile of(int table, DataFile file, PartitionSpec spec) {
      return new ClosedFile(
          table,
          file,
          spec,
          reason,
          buffered,
          minIngest,
          maxIngest,
          closedAt,
          ingestSeconds,
          consumed);
    }
  }

  private static SinkFields readSinkFields(DataInputView in) throws IOException {
    CloseReason reason = CloseReason.valueOf(in.readUTF());
    long buffered = in.readLong();
    long minIngest = in.readLong();
    long maxIngest = in.readLong();
    long closedAt = in.readLong();
    int seconds = in.readInt();
    Map<Long, Long> ingestSeconds = new HashMap<>();
    for (int s = 0; s < seconds; s++) {
      ingestSeconds.put(in.readLong(), in.readLong());
    }
    int staged = in.readInt();
    List<String> consumed = new ArrayList<>(staged);
    for (int s = 0; s < staged; s++) {
      consumed.add(in.readUTF());
    }
    return new SinkFields(
        reason, buffered, minIngest, maxIngest, closedAt, ingestSeconds, consumed);
  }

  /**
   * The partition spec a manifest was written with, from the key-value metadata the Iceberg spec
   * requires of every manifest ({@code schema}, {@code partition-spec-id}, {@code partition-spec}).
   * Read here and handed to {@link ManifestFiles#read(ManifestFile, FileIO, Map)}: Iceberg 1.11
   * deprecates reading the spec from the metadata inside its reader (removed in 1.12), where its
   * own sink passes the table's specs; a state has no table at hand.
   */
  private static PartitionSpec specOf(InputFile manifest) throws IOException {
    Map<String, String> metadata;
    try (AvroIterable<Object> header = Avro.read(manifest).project(HEADER_PROJECTION).build()) {
      metadata = header.getMetadata();
    }
    String schemaJson = metadata.get("schema");
    String specId = metadata.get("partition-spec-id");
    String fields = metadata.get("partition-spec");
    if (schemaJson == null || specId == null || fields == null) {
      throw new IOException(
          "a manifest in the sink's state lacks its schema or partition spec metadata: "
              + metadata.keySet());
    }
    Schema schema = SchemaParser.fromJson(schemaJson);
    return PartitionSpecParser.fromJson(
        schema, "{\"spec-id\": " + Integer.parseInt(specId) + ", \"fields\": " + fields + "}");
  }

  public static void writePositions(Map<String, Long> positions, DataOutputView out)
      throws IOException {
    out.writeInt(positions.size());
    for (Map.Entry<String, Long> e : positions.entrySet()) {
      out.writeUTF(e.getKey());
      out.writeLong(e.getValue());
    }
  }

  public static Map<String, Long> readPositions(DataInputView in) throws IOException {
    int count = in.readInt();
    Map<String, Long> positions = new HashMap<>(count * 2);
    for (int i = 0; i < count; i++) {
      positions.put(in.readUTF(), in.readLong());
    }
    return positions;
  }

  private static void writeBytes(byte[] bytes, DataOutputView out) throws IOException {
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  private static byte[] readBytes(DataInputView in) throws IOException {
    byte[] bytes = new byte[in.readInt()];
    in.readFully(bytes);
    return bytes;
  }

  /** Serves one manifest's bytes to {@link ManifestFiles#read}, which reads through a FileIO. */
  private record OneFileIO(String path, byte[] bytes) implements FileIO {
    @Override
    public InputFile newInputFile(String location) {
      if (!location.equals(path)) {
        throw new IllegalArgumentException("only " + path + " is in memory, not " + location);
      }
      return new InMemoryInputFile(location, bytes);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      throw new UnsupportedOperationException("read only");
    }

    @Override
    public void deleteFile(String location) {
      throw new UnsupportedOperationException("read only");
    }
  }
}
