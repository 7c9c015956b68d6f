package org.spatialingest.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;

/**
 * {@link NioLocalFileSystem}: files get Hadoop's permissions (checksum files too) and no child
 * process is started for them, counted by the JVM's own {@code jdk.ProcessStart} events; Hadoop's
 * own local file system, on the same files, starts one per file and per checksum file.
 */
class NioLocalFileSystemTest {

  @Test
  void theJobsCatalogsUseIt(@TempDir Path dir) {
    JobConfig config = JobConfig.fromMap(Map.of("catalog.warehouse", dir.toString()));
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    assertThat(((Configurable) catalog).getConf().get("fs.file.impl"))
        .isEqualTo(NioLocalFileSystem.class.getName());
  }

  @Test
  void createsFilesWithHadoopsPermissionsWithoutAProcess(@TempDir Path dir) throws Exception {
    FileSystem nio = fileSystem(NioLocalFileSystem.class);
    assertThat(nio).isInstanceOf(NioLocalFileSystem.class);
    long processes = processesStartedWhile(() -> createFiles(nio, dir.resolve("nio"), 5));
    assertThat(processes).as("processes started for 5 files").isZero();
    Path file = dir.resolve("nio").resolve("f0");
    assertThat(Files.getPosixFilePermissions(file))
        .isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
    assertThat(Files.getPosixFilePermissions(dir.resolve("nio").resolve(".f0.crc")))
        .isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
    nio.setPermission(new org.apache.hadoop.fs.Path(file.toUri()), new FsPermission((short) 0600));
    assertThat(Files.getPosixFilePermissions(file))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));

    if (!NativeIO.isAvailable()) { // with Hadoop's native library its own needs no process either
      FileSystem hadoops = fileSystem(LocalFileSystem.class);
      assertThat(processesStartedWhile(() -> createFiles(hadoops, dir.resolve("hadoop"), 5)))
          .as("Hadoop's own local file system: a chmod per file and per checksum file")
          .isGreaterThanOrEqualTo(10);
    }
  }

  private static FileSystem fileSystem(Class<? extends FileSystem> impl) throws Exception {
    Configuration conf = new Configuration();
    conf.setClass("fs.file.impl", impl, FileSystem.class);
    conf.setBoolean("fs.file.impl.disable.cache", true); // this class, not a cached instance
    return FileSystem.get(java.net.URI.create("file:///"), conf);
  }

  private static void createFiles(FileSystem fs, Path dir, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      try (FSDataOutputStream out =
          fs.create(new org.apache.hadoop.fs.Path(dir.resolve("f" + i).toUri()), true)) {
        out.write(new byte[] {1, 2, 3});
      }
    }
  }

  interface Action {
    void run() throws Exception;
  }

  private static long processesStartedWhile(Action action) throws Exception {
    try (Recording recording = new Recording()) {
      recording.enable("jdk.ProcessStart");
      recording.start();
      action.run();
      recording.stop();
      Path dump = Files.createTempFile("process-start", ".jfr");
      try {
        recording.dump(dump);
        return RecordingFile.readAllEvents(dump).stream()
            .filter(e -> e.getEventType().getName().equals("jdk.ProcessStart"))
            .count();
      } finally {
        Files.deleteIfExists(dump);
      }
    }
  }
}
