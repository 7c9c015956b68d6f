package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.spatialingest.config.JobConfig;

/**
 * The corpus against the parser alone (fast): each bad input gets its reason; the job test runs it
 * end to end.
 */
class BadInputCorpusTest {
  @Test
  void everyBadInputGetsItsReason() {
    TelemetryParser parser =
        new TelemetryParser(HilbertCurve.CRS84, JobConfig.fromMap(BadInputCorpus.CONFIG));
    List<BadInputCorpus.Bad> corpus = BadInputCorpus.all();
    assertThat(corpus).hasSizeGreaterThanOrEqualTo(30);
    Set<String> distinct = new HashSet<>();
    for (BadInputCorpus.Bad bad : corpus) {
      assertThat(
              distinct.add(new String(bad.value(), java.nio.charset.StandardCharsets.ISO_8859_1)))
          .as("unique bytes: %s", bad.name())
          .isTrue();
      RecordRejectedException e =
          catchThrowableOfType(RecordRejectedException.class, () -> parser.parse(bad.value(), 1L));
      assertThat(e).as("%s is rejected", bad.name()).isNotNull();
      assertThat(e.reason()).as("%s: %s", bad.name(), e.getMessage()).isEqualTo(bad.reason());
      if (bad.message() != null) {
        assertThat(e.getMessage()).as(bad.name()).contains(bad.message());
      }
    }
  }

  @Test
  void theCorpusCoversEveryReasonReachableWithItsConfig() {
    Set<RejectReason> covered = EnumSet.noneOf(RejectReason.class);
    BadInputCorpus.all().forEach(b -> covered.add(b.reason()));
    // invalid_geometry needs transform.repair=false and reprojection_failed needs
    // transform.reproject-from:
    // both are covered by TransformChainTest and the file-source job test
    assertThat(EnumSet.complementOf(EnumSet.copyOf(covered)))
        .containsExactlyInAnyOrder(RejectReason.INVALID_GEOMETRY, RejectReason.REPROJECTION_FAILED);
  }

  @Test
  void configMapIsValid() {
    assertThat(JobConfig.fromMap(Map.copyOf(BadInputCorpus.CONFIG)).regions().enabled()).isTrue();
  }
}
