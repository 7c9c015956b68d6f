package org.spatialingest.sink.recovery;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Every file under a prefix, whole or not at all: a listing that fails half-way throws, so a
 * clean-up never takes a partial listing for the directory (the chaos run's orphans: Hadoop's
 * listing of a local directory failed on a file another job deleted meanwhile, and the files after
 * it were never looked at). A prefix that does not exist lists as empty.
 *
 * <p>Local {@code file:} locations are walked with {@code java.nio}: Hadoop's local file system
 * without its native library forks an {@code ls} per file to read permissions (measured in the
 * chaos run: a pass over the data directory held the aggregator's thread for tens of seconds and
 * did not react to cancellation), and a file removed during the walk is skipped, not an error. Cost
 * elsewhere: the {@link FileIO}'s own listing (one LIST request per 1,000 objects on S3).
 */
final class PrefixListing {
  private PrefixListing() {}

  static boolean supported(FileIO io) {
    return io instanceof SupportsPrefixOperations;
  }

  /**
   * @param prefix a directory location, ending in {@code /} or not
   * @throws UncheckedIOException or the FileIO's exception if the listing failed after it started
   */
  static List<FileInfo> list(FileIO io, String prefix) {
    Path local = localPath(prefix);
    if (local != null) {
      return walk(local);
    }
    List<FileInfo> files = new ArrayList<>();
    try {
      ((SupportsPrefixOperations) io).listPrefix(prefix).forEach(files::add);
    } catch (RuntimeException e) {
      if (files.isEmpty() && !exists(io, prefix)) {
        return files; // nothing written there yet
      }
      throw e;
    }
    return files;
  }

  private static boolean exists(FileIO io, String prefix) {
    try {
      return io.newInputFile(prefix).exists();
    } catch (RuntimeException e) {
      return true; // cannot tell: the listing's failure stands
    }
  }

  /** The local path of a {@code file:} location, or null for any other scheme. */
  private static Path localPath(String location) {
    if (!location.startsWith("file:")) {
      return null;
    }
    return Path.of(URI.create(location));
  }

  private static List<FileInfo> walk(Path dir) {
    List<FileInfo> files = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return files;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              if (attrs.isRegularFile()) {
                // the form Hadoop's listing gives (file:/path), which the table's locations use too
                files.add(
                    new FileInfo(
                        "file:" + file.toAbsolutePath(),
                        attrs.size(),
                        attrs.lastModifiedTime().toMillis()));
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
              if (e instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE; // removed during the walk
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return files;
  }
}
