package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IsoTimeTest {
  @Test
  void agreesWithInstantParse() {
    Random r = new Random(1);
    for (int i = 0; i < 20_000; i++) {
      long millis = (long) ((r.nextDouble() * 2 - 0.5) * 4_000_000_000_000L);
      Instant t = Instant.ofEpochMilli(millis);
      String s = t.toString();
      assertThat(IsoTime.utcMillis(s)).as(s).isEqualTo(millis);
    }
    assertThat(IsoTime.utcMillis("2024-02-29T23:59:59.123456789Z"))
        .isEqualTo(Instant.parse("2024-02-29T23:59:59.123456789Z").toEpochMilli());
    assertThat(IsoTime.utcMillis("1969-12-31T23:59:59.999Z")).isEqualTo(-1L);
  }

  @Test
  void leavesEverythingElseToJavaTime() {
    for (String s :
        new String[] {
          "2026-11-29T10:00:00+01:00",
          "2026-11-29T10:00Z",
          "2026-02-30T10:00:00Z",
          "2026-11-29 10:00:00Z",
          "+12026-11-29T10:00:00Z",
          "2026-11-29T24:00:00Z",
          "2026-11-29T10:00:00.Z",
          "yesterday",
          "2026-11-29T10:00:60Z"
        }) {
      assertThat(IsoTime.utcMillis(s)).as(s).isEqualTo(IsoTime.NOT_SIMPLE);
    }
  }
}
