package org.spatialingest.table;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system ({@code file:}, checksums included), except that a file's permissions
 * are set through {@code java.nio} instead of a child process. Without Hadoop's native library
 * ({@code libhadoop}, which the job's jars do not carry), {@link RawLocalFileSystem} runs {@code
 * chmod 0644} as a process for every file it creates and again for its {@code .crc}: 762 processes,
 * each with a thread to read its output, in one 35 s benchmark job of ours (benchmarks.md). Same
 * permissions, no fork. {@link Catalogs} sets it as {@code fs.file.impl}; other schemes are
 * untouched.
 */
public final class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new Raw());
  }

  /** The raw (checksum-less) part: only {@link #setPermission} differs from Hadoop's. */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      java.nio.file.Path file = pathToFile(p).toPath();
      if (permission.getStickyBit()
          || !file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
        super.setPermission(p, permission); // what java.nio cannot say: Hadoop's own way
        return;
      }
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(permission.toString()));
    }
  }
}
