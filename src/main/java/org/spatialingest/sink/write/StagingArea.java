package org.spatialingest.sink.write;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;

/**
 * Where a writer persists, at each checkpoint barrier, the rows that arrived since the previous
 * barrier: one run per partition buffer, written once through the table's own {@link FileIO} (so it
 * works wherever the table lives). A checkpoint then costs the data of one interval, not everything
 * buffered; the final Parquet file is still written from memory at close, and the runs are deleted
 * once that file is committed. Runs are read back only on restore.
 *
 * <p>Format (version 3): magic {@code SIRW}, version, the Iceberg schema the rows were written with
 * ({@link SchemaParser} JSON, as length and UTF-8 bytes: the layout's columns with the table's
 * field ids), row count, then per row its length and its {@code RowDataSerializer} bytes. A run
 * written with another schema is read by field id: columns of the current schema are taken from the
 * field with the same id, columns it lacks are null (they must be optional). Version 2 (releases up
 * to 99d1af5) is the same without the schema; its rows have the current layout. A change of this
 * format adds a named version constant, points {@link #VERSION} at it and keeps a read branch for
 * each earlier one.
 */
final class StagingArea {
  private static final int MAGIC = 0x53495257; // "SIRW"

  /** 3: the run records the schema it was written with. */
  static final int V3_SCHEMA = 3;

  /** What this build writes; every read branch names the version it reads, never this one. */
  static final int VERSION = V3_SCHEMA;

  /**
   * 2: no schema, rows in the current layout. Version 1 (rows with the bbox as four doubles, before
   * the GeoParquet struct) is refused: start such a job without state, it resumes from the
   * positions the table records.
   */
  private static final int VERSION_WITHOUT_SCHEMA = 2;

  private final FileIO io;
  private final String tableLocation;
  private final SinkScope scope;
  private final Schema schema;
  private final byte[] schemaJson;
  private final RowDataSerializer serializer;

  /**
   * @param schema the schema rows are written with (the layout's columns, the table's ids)
   * @param serializer the serializer of that schema's rows
   */
  StagingArea(
      FileIO io,
      String tableLocation,
      SinkScope scope,
      Schema schema,
      RowDataSerializer serializer) {
    this.io = io;
    this.tableLocation = tableLocation;
    this.scope = scope;
    this.schema = schema;
    this.schemaJson = SchemaParser.toJson(schema).getBytes(StandardCharsets.UTF_8);
    this.serializer = serializer;
  }

  /** Receives the rows of a run as they are read back. */
  interface RowSink {
    void accept(byte[] row) throws IOException;
  }

  /**
   * Writes rows {@code from} (inclusive) to the end of {@code buffer}; returns the run's location
   * and bytes.
   */
  Written write(long checkpointId, String token, int sequence, PartitionBuffer buffer, int from)
      throws IOException {
    String path = SinkFileNames.stagingRun(tableLocation, scope, checkpointId, token, sequence);
    try (DataOutputStream out =
        new DataOutputStream(
            new BufferedOutputStream(io.newOutputFile(path).createOrOverwrite(), 1 << 16))) {
      out.writeInt(MAGIC);
      out.writeInt(VERSION);
      out.writeInt(schemaJson.length);
      out.write(schemaJson);
      out.writeInt(buffer.size() - from);
      for (int i = from; i < buffer.size(); i++) {
        buffer.writeRow(i, out);
      }
      out.flush();
      return new Written(path, out.size());
    }
  }

  record Written(String path, long bytes) {}

  /**
   * Reads a run back. A missing run means the state is older than the commit of its rows (they were
   * deleted then): restoring it would lose them, so this fails with what to do instead.
   */
  long read(String path, long expectedRows, RowSink rows) throws IOException {
    InputFile file = io.newInputFile(path);
    DataInputStream in;
    try {
      in = new DataInputStream(new BufferedInputStream(file.newStream(), 1 << 16));
    } catch (NotFoundException | UncheckedIOException e) {
      throw missing(path, e);
    }
    try (in) {
      int version = in.readInt() == MAGIC ? in.readInt() : -1;
      if (version != V3_SCHEMA && version != VERSION_WITHOUT_SCHEMA) {
        throw new IOException(
            "not a staging run this build reads: "
                + path
                + " (a state of a build before the bbox "
                + "struct column cannot be restored: start the job without state, it resumes from the table's positions)");
      }
      RowProjection projection = null;
      if (version == V3_SCHEMA) {
        byte[] json = new byte[in.readInt()];
        in.readFully(json);
        Schema written = SchemaParser.fromJson(new String(json, StandardCharsets.UTF_8));
        if (!written.asStruct().equals(schema.asStruct())) {
          projection = new RowProjection(written, schema, serializer, path);
        }
      }
      int count = in.readInt();
      if (count != expectedRows) {
        throw new IOException(
            "staging run " + path + " holds " + count + " rows, the state expects " + expectedRows);
      }
      for (int i = 0; i < count; i++) {
        byte[] row = new byte[in.readInt()];
        in.readFully(row);
        rows.accept(projection == null ? row : projection.apply(row));
      }
      return count;
    } catch (FileNotFoundException e) {
      throw missing(path, e);
    }
  }

  /** The row count a run's header states (for tests and tools that watch the staging area). */
  static int rowCount(DataInputStream in) throws IOException {
    if (in.readInt() != MAGIC) {
      throw new IOException("not a staging run");
    }
    if (in.readInt() == V3_SCHEMA) {
      in.skipNBytes(in.readInt());
    }
    return in.readInt();
  }

  void delete(String path) {
    io.deleteFile(path);
  }

  private static IllegalStateException missing(String path, Exception cause) {
    return new IllegalStateException(
        "The restored state references staging run "
            + path
            + ", which no longer exists: "
            + "the state is older than the commit of those rows (runs are deleted once their rows are committed). Restore "
            + "from the latest checkpoint or savepoint, or start without state: the job then resumes from the positions "
            + "recorded in the table, losing and duplicating nothing.",
        cause);
  }
}
