package org.spatialingest.sink.compat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.iceberg.DataFile;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFileManifests;

/**
 * Reads the closed files of {@code FileBatch} version 3 (builds up to 5e92675): group count; per
 * group its table index, the manifest's descriptor and bytes ({@link
 * ClosedFileManifests#readManifest}), the file count, then per file the sink's fields. Each
 * manifest records its partition spec, so the files are complete {@link ClosedFile}s.
 */
@Internal
public final class ManifestLayoutFiles {
  private ManifestLayoutFiles() {}

  public static List<ClosedFile> read(DataInputView in) throws IOException {
    int groups = in.readInt();
    List<ClosedFile> files = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      int table = in.readInt();
      ClosedFileManifests.Manifest manifest =
          ClosedFileManifests.readManifest(in).requireFiles(in.readInt());
      for (DataFile file : manifest.files()) {
        files.add(ClosedFileManifests.readSinkFields(in, table, file, manifest.spec()));
      }
    }
    return files;
  }
}
