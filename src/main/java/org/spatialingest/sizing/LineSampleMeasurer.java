package org.spatialingest.sizing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalDouble;

/**
 * Measures a newline-delimited sample file (one record per line, e.g. NDJSON): buffered bytes per record are the mean
 * UTF-8 byte length of the non-blank lines, without the line terminator. This is a stand-in for the sink's serialized
 * row size; it does not measure Parquet, so {@code encodedBytesPerRecord} stays empty and the source is
 * {@value #ENCODED_ASSUMED}.
 */
public final class LineSampleMeasurer implements SampleMeasurer {
  public static final String ENCODED_ASSUMED = "assumed-equal-to-buffered";

  private final Path file;

  public LineSampleMeasurer(Path file) {
    this.file = file;
  }

  @Override
  public SampleMeasurement measure() throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("sample file " + file + " does not exist or is not a file");
    }
    long records = 0;
    long bytes = 0;
    try (InputStream in = Files.newInputStream(file);
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        records++;
        bytes += utf8Length(line);
      }
    }
    if (records == 0) {
      throw new IllegalArgumentException("sample file " + file + " holds no records (no non-blank lines)");
    }
    return new SampleMeasurement(
        (double) bytes / records, OptionalDouble.empty(), records, "file:" + file, ENCODED_ASSUMED);
  }

  /** UTF-8 byte length without allocating; unpaired surrogates count as the 1-byte '?' the encoder would write. */
  static long utf8Length(CharSequence s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else if (Character.isSurrogate(c)) {
        n += 1;
      } else {
        n += 3;
      }
    }
    return n;
  }
}
