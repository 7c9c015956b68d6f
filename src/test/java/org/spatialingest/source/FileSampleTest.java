package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link FileSample} on real files: bounded, spread over all files, whole lines, no repeats. */
class FileSampleTest {

  /** Writes {@code files} files of {@code lines} records each; returns the bytes written. */
  private static long write(Path dir, int files, int lines, int padding) throws IOException {
    long bytes = 0;
    String pad = "x".repeat(padding);
    for (int f = 0; f < files; f++) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < lines; i++) {
        b.append(String.format("{\"id\":\"f%02d-%06d\",\"pad\":\"%s\"}%n", f, i, pad));
      }
      byte[] content = b.toString().getBytes(StandardCharsets.UTF_8);
      Files.write(dir.resolve(String.format("day-%02d.json", f)), content);
      bytes += content.length;
    }
    return bytes;
  }

  /** Sampled records per file, checking each is one whole line and none comes twice. */
  private static Map<String, Integer> perFile(FileSample.Sample sample) {
    Map<String, Integer> perFile = new TreeMap<>();
    Set<String> seen = new HashSet<>();
    for (SourceRecord r : sample.records()) {
      String line = new String(r.value, StandardCharsets.UTF_8);
      assertThat(line).as("a whole line").startsWith("{\"id\":\"f").endsWith("\"}");
      assertThat(seen.add(line)).as("read once: %s", line).isTrue();
      assertThat(r.source).isEqualTo("file:" + r.file);
      perFile.merge(line.substring(8, 10), 1, Integer::sum);
    }
    return perFile;
  }

  @Test
  void aLargeBackfillIsSampledAcrossAllItsFilesWithinTheBounds(@TempDir Path dir) throws Exception {
    // 24 files of one day each, ~1 MiB per file: a backfill sorted by time, 3x the byte bound
    int files = 24;
    int lines = 5_000;
    long bytes = write(dir, files, lines, 180);
    FileSample.Sample sample = FileSample.read(dir.toString());

    assertThat(sample.files()).isEqualTo(files);
    assertThat(sample.inputBytes()).isEqualTo(bytes);
    assertThat(sample.bytesRead()).isLessThanOrEqualTo(FileSample.BYTES);
    assertThat(sample.records()).hasSizeBetween(FileSample.RECORDS / 2, FileSample.RECORDS);
    Map<String, Integer> perFile = perFile(sample);
    assertThat(perFile).as("every day is in the sample").hasSize(files);
    int even = sample.records().size() / files;
    assertThat(perFile.values()).allSatisfy(n -> assertThat(n).isBetween(even / 2, even * 2));
    assertThat((double) sample.estimatedRecords()).isCloseTo(files * lines, within(0.05));
  }

  @Test
  void aSmallInputIsReadWholeAndSampledEvenly(@TempDir Path dir) throws Exception {
    write(dir, 3, 4_000, 20);
    // a file the file source skips is not sampled either
    Files.writeString(dir.resolve("_SUCCESS"), "{\"id\":\"f99-000000\",\"pad\":\"\"}\n");
    Files.writeString(dir.resolve("blank.json"), "\n  \n");
    FileSample.Sample sample = FileSample.read(dir.toString());

    assertThat(sample.files()).isEqualTo(4);
    assertThat(sample.estimatedRecords()).isEqualTo(12_000);
    assertThat(sample.records()).hasSize(FileSample.RECORDS);
    Map<String, Integer> perFile = perFile(sample);
    assertThat(perFile.keySet()).containsExactly("00", "01", "02");
    assertThat(perFile.values()).allSatisfy(n -> assertThat(n).isBetween(1_100, 1_650));
  }

  @Test
  void aCompressedFileIsDecompressedAndReadFromItsStart(@TempDir Path dir) throws Exception {
    for (int f = 0; f < 2; f++) {
      try (Writer out =
          new OutputStreamWriter(
              new GZIPOutputStream(
                  Files.newOutputStream(dir.resolve(String.format("day-%02d.json.gz", f)))),
              StandardCharsets.UTF_8)) {
        for (int i = 0; i < 3_000; i++) {
          out.write(String.format("{\"id\":\"f%02d-%06d\",\"pad\":\"\"}%n", f, i));
        }
      }
    }
    FileSample.Sample sample = FileSample.read(dir.toString());

    Map<String, Integer> perFile = perFile(sample);
    assertThat(perFile).containsOnlyKeys("00", "01");
    assertThat(perFile.values()).allSatisfy(n -> assertThat(n).isEqualTo(FileSample.RECORDS / 2));
    assertThat(new String(sample.records().get(0).value, StandardCharsets.UTF_8))
        .as("from the file's start")
        .startsWith("{\"id\":\"f00-000000\"");
  }

  private static org.assertj.core.data.Percentage within(double share) {
    return org.assertj.core.data.Percentage.withPercentage(share * 100);
  }
}
