package org.spatialingest.sink.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;

/**
 * Where the sink's savepoint fixtures live and what they hold; shared by {@link
 * SavepointFixtureGenerator} (writes them) and {@link SavepointRestoreTest} (restores each).
 *
 * <p>One fixture per state-format generation, in {@code src/test/resources/savepoints/<name>/} (the
 * name lists the format versions it holds): {@code savepoint/} (a canonical Flink savepoint,
 * relocatable as Flink makes them), {@code warehouse/} (the Hadoop catalog as it was when the
 * savepoint's batch was about to be committed: so the batch is pending, and the staging runs the
 * savepoint references are there), {@code input-before.ndjson} (what the job had read when the
 * savepoint was taken) and {@code input-after.ndjson} (what the restore test produces next); a file
 * fixture ({@link #readsFiles}) has {@code input/} instead, the directory it reads.
 *
 * <p>Relocation: Iceberg's metadata and the sink's state hold absolute paths (table location, data
 * files, staging runs). So the warehouse is always written at, and restored to, the same absolute
 * path: {@link #warehouseRoot}, under {@code /tmp} (a fixed path, not {@code java.io.tmpdir}, which
 * differs between machines). The restore test deletes what is there and copies the fixture's
 * warehouse in, holding {@link #lock} meanwhile, so two builds on one machine take turns instead of
 * overwriting each other's warehouse.
 */
final class SavepointFixtures {
  static final Path RESOURCES = Path.of("src/test/resources/savepoints");
  static final String TOPIC = "fixture";

  /** Fixed event time of the input (2026-11-01T00:00:00Z), so the rows are the same every run. */
  private static final long EVENT_TIME = 1_793_491_200_000L;

  private SavepointFixtures() {}

  private static final Path ROOT = Path.of("/tmp/spatial-ingest-savepoint-fixtures");

  static Path warehouseRoot(String fixture) {
    return ROOT.resolve(fixture).resolve("warehouse");
  }

  /**
   * Whether a fixture reads a directory of files ({@code source: file:}) instead of Kafka: its name
   * starts with {@code files-}. Its savepoint then holds no Kafka cluster or topic ids, which a
   * fresh broker could never match, so it restores on any machine as it was taken.
   */
  static boolean readsFiles(String fixture) {
    return fixture.startsWith("files-");
  }

  /** Where a file fixture's input directory is written and restored: fixed, as the warehouse. */
  static Path inputRoot(String fixture) {
    return ROOT.resolve(fixture).resolve("input");
  }

  /**
   * An exclusive lock on the fixed fixture path, across processes (a file lock): held while a
   * fixture's warehouse is written and used, released by closing the returned channel. Blocks until
   * another build's holder releases it.
   */
  static FileChannel lock() throws IOException {
    Files.createDirectories(ROOT);
    FileChannel channel =
        FileChannel.open(
            ROOT.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    try {
      channel.lock();
      return channel;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /** The job's settings, the same when taking and restoring the fixture. */
  static JobConfig config(String bootstrap, String fixture, Map<String, String> extra) {
    Map<String, String> keys = new HashMap<>();
    // files close by bytes only (T small), latency never: the savepoint holds a batch of closed
    // files and buffers still in staging runs; no periodic checkpoint comes before it
    keys.put("sink.target-file-size", "48KB");
    keys.put("sink.max-latency", "2h");
    keys.put("checkpoint.interval", "30min");
    keys.put("kafka.starting-offsets", "earliest");
    if (readsFiles(fixture)) {
      // one file per checkpoint: the savepoint (the first checkpoint) comes with the second file
      // not yet handed out, so the restore reads it
      keys.put("source", "file:" + inputRoot(fixture));
      keys.put("source.file.max-files-per-checkpoint", "1");
    }
    keys.putAll(extra);
    return TestKit.config(bootstrap, TOPIC, warehouseRoot(fixture), keys);
  }

  /**
   * Deterministic input: {@code count} records with ids {@code <prefix><i>}, one in 20 to reject
   * (no coordinates), event times fixed.
   */
  static List<String> input(String prefix, int count) {
    List<String> values = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      if (i % 20 == 19) {
        values.add(
            "{\"id\":\""
                + prefix
                + "bad-"
                + i
                + "\",\"event_time\":"
                + EVENT_TIME
                + ",\"geometry\":{\"type\":\"Point\"}}");
      } else {
        values.add(
            String.format(
                Locale.ROOT,
                "{\"id\":\"%s%d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\","
                    + "\"coordinates\":[%.5f,%.5f]},\"properties\":{\"pad\":\"%s\"}}",
                prefix,
                i,
                EVENT_TIME + (i % 7) * 3_600_000L + i,
                (i * 7.3) % 360 - 180,
                (i * 3.1) % 180 - 90,
                "x".repeat(60)));
      }
    }
    return values;
  }

  static boolean isReject(String value) {
    return !value.contains("coordinates");
  }

  static String id(String value) {
    int start = value.indexOf("\"id\":\"") + 6;
    return value.substring(start, value.indexOf('"', start));
  }

  static List<byte[]> bytes(List<String> values) {
    return values.stream().map(v -> v.getBytes(StandardCharsets.UTF_8)).toList();
  }

  static List<String> readLines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
        .filter(l -> !l.isBlank())
        .toList();
  }

  static Set<String> rowIds(List<String> values) {
    Set<String> ids = new HashSet<>();
    values.stream().filter(v -> !isReject(v)).forEach(v -> ids.add(id(v)));
    return ids;
  }

  static Set<String> rejects(List<String> values) {
    Set<String> raw = new HashSet<>();
    values.stream().filter(SavepointFixtures::isReject).forEach(raw::add);
    return raw;
  }

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : files.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (!p.getFileName().toString().startsWith(".")) {
          // Hadoop's .crc side files are left out: they are rewritten with each file
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> files = Files.walk(root)) {
      files
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.delete(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }
}
