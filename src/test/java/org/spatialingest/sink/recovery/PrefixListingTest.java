package org.spatialingest.sink.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.FileInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Listings of a local directory through Hadoop's FileIO: whole, in the table's form, or none. */
class PrefixListingTest {
  @TempDir Path dir;

  @Test
  void aLocalDirectoryListsEveryFileInTheFormHadoopGivesAndAMissingOneListsEmpty()
      throws Exception {
    Files.createDirectories(dir.resolve("data/day=1"));
    Files.writeString(dir.resolve("data/day=1/a.parquet"), "abc");
    Files.writeString(dir.resolve("data/b.parquet"), "de");
    try (HadoopFileIO io = new HadoopFileIO(new Configuration())) {
      String prefix = dir.toUri().toString() + "data";
      List<FileInfo> ours = PrefixListing.list(io, prefix);
      List<FileInfo> hadoops = new java.util.ArrayList<>();
      io.listPrefix(prefix).forEach(hadoops::add);
      assertThat(ours)
          .extracting(FileInfo::location, FileInfo::size)
          .containsExactlyInAnyOrderElementsOf(
              hadoops.stream()
                  .map(f -> org.assertj.core.groups.Tuple.tuple(f.location(), f.size()))
                  .toList());
      assertThat(ours).hasSize(2);
      assertThat(PrefixListing.list(io, dir.toUri() + "nothing-here/")).isEmpty();
    }
  }

  @Test
  void aListingThatFailsAfterItStartedThrows() {
    // a FileIO whose listing fails half-way: the clean-up must not take the first file for all
    HadoopFileIO io =
        new HadoopFileIO(new Configuration()) {
          @Override
          public Iterable<FileInfo> listPrefix(String prefix) {
            return () ->
                new java.util.Iterator<>() {
                  private boolean first = true;

                  @Override
                  public boolean hasNext() {
                    return true;
                  }

                  @Override
                  public FileInfo next() {
                    if (first) {
                      first = false;
                      return new FileInfo(prefix + "/a", 1, 0);
                    }
                    throw new java.io.UncheckedIOException(new java.io.IOException("gone"));
                  }
                };
          }
        };
    assertThatThrownBy(() -> PrefixListing.list(io, "s3://bucket/table/data"))
        .hasMessageContaining("gone");
  }
}
