package org.spatialingest.sizing;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the file sizes {@code estimate-tasks --sizes} takes. Two forms:
 *
 * <ul>
 *   <li>a plain list: one size in bytes (a non-negative integer) per line; blank lines are skipped
 *       and any other line is an error;
 *   <li>an object-store listing or header dump: once any line starts with {@code Content-Length:}
 *       (any case), only those lines count, each giving one file; every other line is ignored, but
 *       a {@code Content-Length} line without a valid size is an error.
 * </ul>
 */
public final class SizesFile {
  private static final Pattern CONTENT_LENGTH = Pattern.compile("(?i)content-length\\s*:\\s*(.*)");
  private static final Pattern DIGITS = Pattern.compile("\\d+");

  private SizesFile() {}

  /** A line that is not a size; {@link #lineNumber()} is 1-based. */
  public static final class BadLineException extends IllegalArgumentException {
    private final int lineNumber;

    BadLineException(int lineNumber, String message) {
      super("line " + lineNumber + ": " + message);
      this.lineNumber = lineNumber;
    }

    public int lineNumber() {
      return lineNumber;
    }
  }

  public static List<Long> parse(List<String> lines) {
    boolean listing = false;
    for (String line : lines) {
      if (CONTENT_LENGTH.matcher(strip(line)).matches()) {
        listing = true;
        break;
      }
    }
    List<Long> sizes = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = strip(lines.get(i));
      int lineNumber = i + 1;
      if (listing) {
        Matcher m = CONTENT_LENGTH.matcher(line);
        if (m.matches()) {
          sizes.add(size(lineNumber, m.group(1).trim(), "Content-Length value"));
        }
      } else if (!line.isEmpty()) {
        sizes.add(size(lineNumber, line, "size"));
      }
    }
    return sizes;
  }

  private static long size(int lineNumber, String text, String what) {
    if (!DIGITS.matcher(text).matches()) {
      throw new BadLineException(
          lineNumber,
          String.format(
              Locale.ROOT, "'%s' is not a %s in bytes (a non-negative integer)", text, what));
    }
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new BadLineException(lineNumber, "'" + text + "' is too large for a size in bytes");
    }
  }

  private static String strip(String line) {
    String s = line.strip();
    return s.startsWith("\uFEFF") ? s.substring(1) : s;
  }
}
