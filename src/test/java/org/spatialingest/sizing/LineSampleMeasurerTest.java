package org.spatialingest.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LineSampleMeasurerTest {
  @TempDir Path dir;

  @Test
  void meanUtf8LineLength() throws Exception {
    // "abc" = 3 bytes; "é€" = 2 + 3 = 5 bytes; "😀" = 4 bytes; blank lines do not count -> (3 + 5 + 4) / 3 = 4
    Path f = dir.resolve("s.ndjson");
    Files.write(f, "abc\n\né€\r\n😀\n".getBytes(StandardCharsets.UTF_8));
    SampleMeasurement m = new LineSampleMeasurer(f).measure();
    assertThat(m.sampleSize()).isEqualTo(3);
    assertThat(m.bufferedBytesPerRecord()).isEqualTo(4.0);
    assertThat(m.encodedBytesPerRecord()).isEmpty();
    assertThat(m.encodedBytesSource()).isEqualTo("assumed-equal-to-buffered");
    assertThat(LineSampleMeasurer.utf8Length("é€😀")).isEqualTo("é€😀".getBytes(StandardCharsets.UTF_8).length);
  }

  @Test
  void emptySampleIsRejected() throws Exception {
    Path f = dir.resolve("empty");
    Files.writeString(f, "\n \n");
    assertThatThrownBy(() -> new LineSampleMeasurer(f).measure()).hasMessageContaining("no records");
  }
}
