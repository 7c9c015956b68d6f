package org.spatialingest.sizing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SizesFileTest {
  @Test
  void plainListSkipsBlankLines() {
    assertThat(SizesFile.parse(List.of("10", "", "  20  ", "0"))).containsExactly(10L, 20L, 0L);
  }

  @Test
  void listingUsesOnlyContentLengthLines() {
    List<String> listing =
        List.of(
            "HTTP/1.1 200 OK",
            "Content-Length: 52428800",
            "ETag: \"abc\"",
            "",
            "content-length:7\r",
            "Last-Modified: Tue, 11 Jun 2024 10:00:00 GMT");
    assertThat(SizesFile.parse(listing)).containsExactly(52_428_800L, 7L);
  }

  @Test
  void badLinesNameTheirNumber() {
    assertThatThrownBy(() -> SizesFile.parse(List.of("1", "", "12x")))
        .isInstanceOf(SizesFile.BadLineException.class)
        .hasMessageStartingWith("line 3:")
        .hasMessageContaining("12x");
    assertThatThrownBy(() -> SizesFile.parse(List.of("x", "Content-Length: -4")))
        .hasMessageStartingWith("line 2:");
    assertThatThrownBy(() -> SizesFile.parse(List.of("99999999999999999999")))
        .hasMessageStartingWith("line 1:")
        .hasMessageContaining("too large");
  }
}
