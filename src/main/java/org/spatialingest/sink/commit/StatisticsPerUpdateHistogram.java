package org.spatialingest.sink.commit;

import java.util.HashMap;
import java.util.Map;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.HistogramStatistics;

/**
 * A histogram whose statistics (quantiles included) are computed once per change of its values, not
 * once per read. Flink's {@code DescriptiveStatisticsHistogram} computes them on every read: each
 * metric dump (every REST metrics fetch, every reporter interval) runs a selection over the whole
 * window per quantile, while the committer changes its values only once per commit. Same values and
 * figures as the wrapped histogram.
 */
final class StatisticsPerUpdateHistogram implements Histogram {
  private final Histogram histogram;

  /** written by the committer's thread only */
  private volatile long updates;

  private long statisticsAt = -1;
  private Statistics statistics;

  StatisticsPerUpdateHistogram(Histogram histogram) {
    this.histogram = histogram;
  }

  @Override
  public void update(long value) {
    histogram.update(value);
    updates++; // one writer: the committer's thread
  }

  @Override
  public long getCount() {
    return histogram.getCount();
  }

  @Override
  public synchronized HistogramStatistics getStatistics() {
    long seen = updates;
    if (statistics == null || seen != statisticsAt) {
      statistics = new Statistics(histogram.getStatistics());
      statisticsAt = seen;
    }
    return statistics;
  }

  /** One snapshot's figures, each quantile computed the first time it is asked for. */
  private static final class Statistics extends HistogramStatistics {
    private final HistogramStatistics snapshot;
    private final long min;
    private final long max;
    private final double mean;
    private final double stdDev;
    private final Map<Double, Double> quantiles = new HashMap<>();

    Statistics(HistogramStatistics snapshot) {
      this.snapshot = snapshot;
      this.min = snapshot.getMin();
      this.max = snapshot.getMax();
      this.mean = snapshot.getMean();
      this.stdDev = snapshot.getStdDev();
    }

    @Override
    public synchronized double getQuantile(double quantile) {
      return quantiles.computeIfAbsent(quantile, snapshot::getQuantile);
    }

    @Override
    public long[] getValues() {
      return snapshot.getValues();
    }

    @Override
    public int size() {
      return snapshot.size();
    }

    @Override
    public double getMean() {
      return mean;
    }

    @Override
    public double getStdDev() {
      return stdDev;
    }

    @Override
    public long getMax() {
      return max;
    }

    @Override
    public long getMin() {
      return min;
    }
  }
}
