package org.spatialingest.sizing;

import java.util.Locale;

/**
 * What one record and one commit cost, as measured by the project's benchmarks; the inputs of
 * {@link ClusterPlan}. One owner of these figures: a new measurement changes them here and in the
 * page that shows it ({@code src/site/markdown/scale.md}).
 *
 * <p>CPU per record: the throughput phase of the benchmark harness on a quiet 2-core machine
 * (2026-11-30, {@code benchmarks.md}, "Throughput on a quiet machine", run 2, median of 3
 * interleaved rounds, by the child JVM's CPU time, JIT included): the floor F (source, parse,
 * transform, no sink) and ours A; the sink's share is A − F and includes the range exchange.
 *
 * <p>Metadata per commit: the README demo's table (2026-12-01, 6 commits of one data file each):
 * the manifest, the manifest list, and what each retained snapshot adds to {@code metadata.json}.
 */
public enum MeasuredCosts {
  /** Point records (the generator's vehicles): F 147,929 and A 57,471 records per CPU second. */
  POINTS(1e6 / 147_929, 1e6 / 57_471 - 1e6 / 147_929),
  /** The default mix (points plus 200-vertex polygon refreshes): F 8,399 and A 5,626 per CPU s. */
  MIX(1e6 / 8_399, 1e6 / 5_626 - 1e6 / 8_399);

  /** A manifest holding one data file, bytes (8,925–8,934 measured). */
  public static final long MANIFEST_BYTES = 8_930;

  /** A manifest list, bytes (4,464–4,737 measured over 6 commits). */
  public static final long MANIFEST_LIST_BYTES = 4_600;

  /** What each retained snapshot adds to every later {@code metadata.json}, bytes (1,545–1,578). */
  public static final long SNAPSHOT_ENTRY_BYTES = 1_550;

  /**
   * CPU of the aggregator and committer (parallelism 1, one thread each) per closed file, µs, when
   * every buffer closes at one checkpoint: the writers' reports merged, the batch stored, its
   * manifests concatenated and appended, the commit ({@code CommitPathBenchmark}, 2026-12-02,
   * scale.md "One manifest per table and commit": 61 at W = 64, 72 at W = 256, 62 at W = 1,024; the
   * largest is kept; it was 1,099 before the committer appended the writers' manifests as they
   * are).
   */
  public static final double COMMIT_PATH_MICROS_PER_FILE = 72;

  private final double transformMicrosPerRecord;
  private final double sinkMicrosPerRecord;

  MeasuredCosts(double transformMicrosPerRecord, double sinkMicrosPerRecord) {
    this.transformMicrosPerRecord = transformMicrosPerRecord;
    this.sinkMicrosPerRecord = sinkMicrosPerRecord;
  }

  /** CPU µs per record of the source, parse and transform chain. */
  public double transformMicrosPerRecord() {
    return transformMicrosPerRecord;
  }

  /** CPU µs per record of the sink: range exchange, buffering, staging, writing Parquet. */
  public double sinkMicrosPerRecord() {
    return sinkMicrosPerRecord;
  }

  /** The name {@code plan --workload} takes. */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The workload named {@code name} ({@code points}, {@code mix}); a clear error otherwise. */
  public static MeasuredCosts of(String name) {
    for (MeasuredCosts c : values()) {
      if (c.cliName().equals(name)) {
        return c;
      }
    }
    throw new IllegalArgumentException(
        "--workload must be one of points, mix (measured costs), was '" + name + "'");
  }
}
