package org.spatialingest.sink.write;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IngestTimeCountsTest {
  @Test
  void countsRowsPerSecondWhateverTheOrder() {
    Random random = new Random(9);
    IngestTimeCounts counts = new IngestTimeCounts();
    Map<Long, Long> expected = new HashMap<>();
    long t = 1_795_946_400_000L;
    for (int i = 0; i < 10_000; i++) {
      // mostly increasing, with late rows from earlier seconds mixed in
      long ingest = i % 17 == 0 ? t - random.nextInt(60_000) : (t += random.nextInt(5));
      counts.add(ingest);
      expected.merge(Math.floorDiv(ingest, 1000L), 1L, Long::sum);
    }
    assertThat(counts.toMap()).isEqualTo(expected);
    assertThat(counts.toMap()).as("reading twice changes nothing").isEqualTo(expected);
    IngestTimeCounts merged = new IngestTimeCounts();
    merged.addAll(counts.toMap());
    merged.add(t);
    expected.merge(Math.floorDiv(t, 1000L), 1L, Long::sum);
    assertThat(merged.toMap()).isEqualTo(expected);
  }
}
