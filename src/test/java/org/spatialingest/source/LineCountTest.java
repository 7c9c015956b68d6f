package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The start check's line count ({@link LineRecordFormat.LineCount}) numbers lines and records as
 * the reader does, however the bytes are cut into buffers: blank lines of spaces, tabs and {@code
 * \r}, empty lines, {@code \r\n}, long lines, a last line without a newline.
 */
class LineCountTest {
  @Test
  void countsAsTheReaderReads() throws Exception {
    Random random = new Random(59);
    String[] blanks = {"", " ", "\t", "\r", " \t \r", "  "};
    for (int round = 0; round < 200; round++) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int lines = random.nextInt(40);
      for (int i = 0; i < lines; i++) {
        String line =
            random.nextInt(4) == 0
                ? blanks[random.nextInt(blanks.length)]
                : (random.nextBoolean() ? " " : "")
                    + "{\"id\":\"r"
                    + i
                    + "\"}"
                    + "x".repeat(random.nextInt(3) == 0 ? random.nextInt(300) : random.nextInt(9))
                    + (random.nextBoolean() ? "\r" : "");
        bytes.write(line.getBytes(StandardCharsets.UTF_8));
        if (i < lines - 1 || random.nextBoolean()) {
          bytes.write('\n');
        }
      }
      byte[] data = bytes.toByteArray();

      long records = 0;
      long lastRecordLine = 0;
      try (LineRecordFormat.LineReader reader =
          new LineRecordFormat.LineReader(new ByteArrayInputStream(data))) {
        SourceRecord r;
        while ((r = reader.read()) != null) {
          records++;
          lastRecordLine = r.position();
        }
      }
      long newlines = 0;
      for (byte b : data) {
        newlines += b == '\n' ? 1 : 0;
      }
      boolean terminated = data.length == 0 || data[data.length - 1] == '\n';

      LineRecordFormat.LineCount count = new LineRecordFormat.LineCount();
      for (int at = 0; at < data.length; ) {
        int n = Math.min(data.length - at, 1 + random.nextInt(40));
        byte[] buf = new byte[n + random.nextInt(16)];
        System.arraycopy(data, at, buf, 0, n);
        count.add(buf, n);
        at += n;
      }
      long countedLines = count.lines() + (terminated ? 0 : 1);
      long countedRecords = count.records() + (count.inRecord() ? 1 : 0);
      assertThat(countedRecords).as("records of round %d", round).isEqualTo(records);
      assertThat(countedLines)
          .as("lines of round %d", round)
          .isEqualTo(newlines + (terminated ? 0 : 1));
      assertThat(lastRecordLine).isLessThanOrEqualTo(countedLines);
    }
  }
}
