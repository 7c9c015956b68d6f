package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.metrics.HistogramStatistics;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.junit.jupiter.api.Test;

class StatisticsPerUpdateHistogramTest {
  private static final double[] QUANTILES = {0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.999};

  @Test
  void reportsTheWrappedHistogramsFiguresAndFollowsItsUpdates() {
    DescriptiveStatisticsHistogram plain = new DescriptiveStatisticsHistogram(64);
    StatisticsPerUpdateHistogram cached =
        new StatisticsPerUpdateHistogram(new DescriptiveStatisticsHistogram(64));
    for (long v = 1; v <= 100; v++) {
      plain.update(v * 7 % 101);
      cached.update(v * 7 % 101);
    }
    assertSame(cached.getStatistics(), plain.getStatistics());
    HistogramStatistics before = cached.getStatistics();
    assertThat(cached.getStatistics()).isSameAs(before); // no update: not computed again

    plain.update(5_000);
    cached.update(5_000);
    assertThat(cached.getStatistics()).isNotSameAs(before);
    assertThat(cached.getStatistics().getMax()).isEqualTo(5_000);
    assertSame(cached.getStatistics(), plain.getStatistics());
    assertThat(cached.getCount()).isEqualTo(101);
  }

  private static void assertSame(HistogramStatistics actual, HistogramStatistics expected) {
    assertThat(actual.getMin()).isEqualTo(expected.getMin());
    assertThat(actual.getMax()).isEqualTo(expected.getMax());
    assertThat(actual.getMean()).isEqualTo(expected.getMean());
    assertThat(actual.getStdDev()).isEqualTo(expected.getStdDev());
    assertThat(actual.size()).isEqualTo(expected.size());
    assertThat(actual.getValues()).containsExactly(expected.getValues());
    for (double q : QUANTILES) {
      assertThat(actual.getQuantile(q)).isEqualTo(expected.getQuantile(q));
      assertThat(actual.getQuantile(q)).isEqualTo(expected.getQuantile(q)); // memoized
    }
  }
}
