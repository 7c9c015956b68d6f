package org.spatialingest.sink.compat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFileManifests;

/**
 * Reads the closed files of {@code FileBatch} version 2 (releases up to 99d1af5): file count, then
 * per file its table index, its Java-serialized {@link DataFile} (length and bytes) and the sink's
 * fields. That format kept only the file's partition spec id; each file gets the spec of that id
 * from its table ({@link TableSpecs}), not the table's current spec: the file's partition tuple is
 * laid out by the spec it was written with, and an Iceberg commit resolves a data file's spec by
 * its id too. So the files are {@link ClosedFile}s like any other, and a batch that is not
 * committed before the next checkpoint is written again in today's format.
 */
@Internal
public final class JavaSerializedFiles {
  private JavaSerializedFiles() {}

  /** The files; fails naming the file if its table no longer has its spec id. */
  public static List<ClosedFile> read(DataInputView in, TableSpecs specs) throws IOException {
    int count = in.readInt();
    List<ClosedFile> files = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int table = in.readInt();
      byte[] bytes = new byte[in.readInt()];
      in.readFully(bytes);
      DataFile file;
      try {
        file =
            InstantiationUtil.deserializeObject(
                bytes, Thread.currentThread().getContextClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IOException("cannot read a data file of release 99d1af5's state", e);
      }
      Map<Integer, PartitionSpec> tableSpecs = specs.specsOf(table);
      PartitionSpec spec = tableSpecs.get(file.specId());
      if (spec == null) {
        throw new IOException(
            "data file "
                + file.location()
                + " of a restored batch (release 99d1af5's state) has partition spec id "
                + file.specId()
                + ", which sink table "
                + table
                + " no longer has (it has "
                + tableSpecs.keySet()
                + "); restore with the build that took the state, or start without state");
      }
      files.add(ClosedFileManifests.readSinkFields(in, table, file, spec));
    }
    return files;
  }
}
