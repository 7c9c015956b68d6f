package org.spatialingest.sizing;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses sizes and durations as people write them in configs and on the command line.
 *
 * <p>Sizes: a plain number is bytes; {@code KB MB GB} are powers of 10, {@code KiB MiB GiB} powers
 * of 2 ({@code 128MiB}, {@code 256MB}, {@code 4mb}). Durations: {@code ms s m h} ({@code 500ms},
 * {@code 120s}, {@code 2m}); a plain number is seconds.
 */
public final class Units {
  private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)");
  private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)");

  private Units() {}

  public static long parseBytes(String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a size; use bytes or a number with B, KB, MB, GB, KiB, MiB or GiB");
    }
    double value = Double.parseDouble(m.group(1));
    long unit =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "", "b" -> 1L;
          case "k", "kb" -> 1_000L;
          case "m", "mb" -> 1_000_000L;
          case "g", "gb" -> 1_000_000_000L;
          case "kib" -> 1L << 10;
          case "mib" -> 1L << 20;
          case "gib" -> 1L << 30;
          default ->
              throw new IllegalArgumentException(
                  "'"
                      + text
                      + "' has unknown size unit '"
                      + m.group(2)
                      + "'; allowed: B, KB, MB, GB, KiB, MiB, GiB");
        };
    return Math.round(value * unit);
  }

  public static Duration parseDuration(String text) {
    Matcher m = DURATION.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration; use e.g. 500ms, 10s, 2m, 1h");
    }
    double value = Double.parseDouble(m.group(1));
    double millis =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "ms" -> value;
          case "", "s" -> value * 1_000;
          case "m", "min" -> value * 60_000;
          case "h" -> value * 3_600_000;
          default ->
              throw new IllegalArgumentException(
                  "'"
                      + text
                      + "' has unknown duration unit '"
                      + m.group(2)
                      + "'; allowed: ms, s, m, h");
        };
    return Duration.ofMillis(Math.round(millis));
  }

  /**
   * A size as a config value {@link #parseBytes} reads back exactly: whole decimal megabytes as
   * {@code 128MB}, whole mebibytes as {@code 64MiB}, anything else as plain bytes.
   */
  public static String formatSize(long bytes) {
    if (bytes > 0 && bytes % 1_000_000L == 0) {
      return bytes / 1_000_000L + "MB";
    }
    if (bytes > 0 && bytes % (1L << 20) == 0) {
      return (bytes >> 20) + "MiB";
    }
    return Long.toString(bytes);
  }

  /**
   * A duration as a config value {@link #parseDuration} reads back exactly: {@code 10s}, or {@code
   * 1500ms}.
   */
  public static String formatDuration(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }

  /** Decimal megabytes ({@code -mb} flags) to bytes, rounded to the nearest byte. */
  public static long megabytesToBytes(double mb) {
    if (!(mb >= 0) || !Double.isFinite(mb)) {
      throw new IllegalArgumentException("'" + mb + "' is not a size in MB");
    }
    return Math.round(mb * 1e6);
  }
}
