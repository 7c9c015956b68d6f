package org.spatialingest.tools;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.spatialingest.geometry.RawRecord;

/** A newline-delimited JSON sample file: one record per non-blank line. */
public final class SampleFile {
  private SampleFile() {}

  /**
   * The records of {@code file}; {@link IllegalArgumentException} when it is missing or holds no
   * records.
   */
  public static List<RawRecord> read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(
          "sample file " + file + " does not exist or is not a file");
    }
    List<RawRecord> records = new ArrayList<>();
    try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (!line.isBlank()) {
          records.add(new RawRecord(line.getBytes(StandardCharsets.UTF_8), null));
        }
      }
    }
    if (records.isEmpty()) {
      throw new IllegalArgumentException(
          "sample file " + file + " holds no records (no non-blank lines)");
    }
    return records;
  }
}
