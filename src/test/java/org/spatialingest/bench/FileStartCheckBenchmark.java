package org.spatialingest.bench;

import java.io.BufferedWriter;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.Table;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.FileStartCheck;
import org.spatialingest.table.Catalogs;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TableBootstrap;
import org.spatialingest.table.TablePositions;
import org.spatialingest.table.TelemetryTable;

/**
 * What the file start check ({@link FileStartCheck}) costs on one large input file, beside a plain
 * sequential read of the same file in the same run: a new file, the same file known (appended to),
 * and the file moved (recognised by its fingerprint). Hadoop catalog under {@code dir}.
 *
 * <pre>
 * mvn -B -o -Pbench verify -Dbench.class=FileStartCheckBenchmark -Dbench.args="mib=1024"
 * </pre>
 *
 * Arguments: {@code mib=} file size (1024), {@code rounds=} (3), {@code dir=}
 * (target/bench/file-start-check, emptied first).
 */
public final class FileStartCheckBenchmark {
  private FileStartCheckBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (String arg : args) {
      String[] kv = arg.split("=", 2);
      a.put(kv[0], kv.length > 1 ? kv[1] : "true");
    }
    long mib = Long.parseLong(a.getOrDefault("mib", "1024"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
    Path dir = Path.of(a.getOrDefault("dir", "target/bench/file-start-check")).toAbsolutePath();
    SinkBenchmark.deleteRecursively(dir);
    Path in = Files.createDirectories(dir.resolve("in"));
    Path file = in.resolve("big.ndjson");
    long bytes = mib << 20;
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      long written = 0;
      for (long i = 0; written < bytes; i++) {
        String line =
            String.format(
                Locale.ROOT,
                "{\"id\":\"r%d\",\"event_time\":%d,\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.5f,%.5f]}}%n",
                i,
                1_796_000_000_000L + i,
                (i * 7.3) % 360 - 180,
                (i * 3.1) % 180 - 90);
        w.write(line);
        written += line.length();
      }
    }
    JobConfig config =
        TestKit.config(
            "localhost:1", "unused", dir.resolve("warehouse"), Map.of("source", "file:" + in));
    Table table =
        TableBootstrap.ensureTable(
            Catalogs.catalogLoader(config).loadCatalog(),
            Catalogs.tableIdentifier(config),
            TelemetryTable.LAYOUT,
            config.partitioning());
    System.out.printf(
        Locale.ROOT, "file %s: %,d bytes; %d rounds%n", file, Files.size(file), rounds);
    System.out.println(
        "round | plain read s | check, new file s | check, known file s | check, moved file s");
    Path moved = in.resolve("moved.ndjson");
    for (int r = 1; r <= rounds; r++) {
      double read = seconds(() -> readAll(Files.exists(file) ? file : moved));
      if (Files.exists(moved)) {
        Files.move(moved, file);
      }
      // a new table state each round: the file unknown, then known, then moved
      StartPositions[] start = new StartPositions[1];
      double fresh = seconds(() -> start[0] = decide(config, table, true));
      record(table, config.sinkId(), start[0]);
      double known = seconds(() -> decide(config, table, false));
      Files.move(file, moved);
      double recognised = seconds(() -> decide(config, table, false));
      forget(table, config.sinkId());
      System.out.printf(
          Locale.ROOT,
          "%d | %.2f | %.2f (%.2f×) | %.2f (%.2f×) | %.2f (%.2f×)%n",
          r,
          read,
          fresh,
          fresh / read,
          known,
          known / read,
          recognised,
          recognised / read);
    }
  }

  private static StartPositions decide(JobConfig config, Table table, boolean unused) {
    table.refresh();
    return FileStartCheck.decide(config, table, true).positions();
  }

  /** Commits an empty snapshot as the sink's commit would: positions and the fingerprints. */
  private static void record(Table table, String sinkId, StartPositions start) {
    table.refresh();
    var append = table.newFastAppend();
    TablePositions.summary(sinkId, KafkaIds.unknown(), Map.of()).forEach(append::set);
    append.set(SnapshotSummaryKeys.FILE_INPUTS, start.filesRecord().location());
    append.commit();
  }

  /** The sink's positions without fingerprints on top: the next round's file is new again. */
  private static void forget(Table table, String sinkId) {
    table.refresh();
    var append = table.newFastAppend();
    TablePositions.summary(sinkId, KafkaIds.unknown(), Map.of()).forEach(append::set);
    append.commit();
  }

  private static void readAll(Path file) throws Exception {
    byte[] buf = new byte[256 * 1024];
    try (InputStream in = Files.newInputStream(file)) {
      while (in.read(buf) >= 0) {
        // read only
      }
    }
  }

  private interface Step {
    void run() throws Exception;
  }

  private static double seconds(Step step) throws Exception {
    long t0 = System.nanoTime();
    step.run();
    return (System.nanoTime() - t0) / 1e9;
  }
}
