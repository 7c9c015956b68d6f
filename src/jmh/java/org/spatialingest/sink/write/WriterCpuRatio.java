package org.spatialingest.sink.write;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@link WriterBenchmark}'s three writers side by side, timed by this thread's CPU time rather than
 * the wall clock (a shared machine swings JMH's wall-clock figures far more than the difference):
 * interleaved rounds, the order rotating, each writer writing the whole file {@code writes} times
 * per round; the report is CPU ns per row of each, the ratios of sums ours / Iceberg's and ours /
 * ours with Iceberg's generic row writer (with the median, min and max of the rounds' ratios), and
 * each file's bytes.
 *
 * <p>Run (after {@code mvn -B -o -Pjmh test-compile}): {@code java -cp <test classpath>
 * org.spatialingest.sink.write.WriterCpuRatio [rounds=9] [writes=3] [rows=100000]} (see
 * src/site/markdown/benchmarks.md, "The writer alone").
 */
public final class WriterCpuRatio {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private WriterCpuRatio() {}

  /** A writer's whole file, returning its bytes. */
  private interface Write {
    long run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
    int writes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    int rows = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
    WriterBenchmark b = new WriterBenchmark();
    b.rows = rows;
    b.setUp();
    try {
      Write ours = b::ours;
      Write generic = b::oursGenericRows;
      Write iceberg = b::iceberg;
      Write[] writers = {ours, generic, iceberg};
      for (int i = 0; i < 5; i++) { // warm-up: JIT every path
        for (Write w : writers) {
          cpuNanos(w, writes);
        }
      }
      double[][] nanos = new double[rounds][3];
      List<String> detail = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
          int w = (r + k) % 3; // the order rotates each round
          nanos[r][w] = cpuNanos(writers[w], writes);
        }
        detail.add(
            String.format(
                Locale.ROOT,
                "%.0f/%.0f/%.0f",
                nanos[r][0] / writes / rows,
                nanos[r][1] / writes / rows,
                nanos[r][2] / writes / rows));
      }
      long[] bytes = b.fileBytes();
      System.out.printf(
          Locale.ROOT,
          "writer alone, %d clustered point rows, one file, CPU ns per row (sums over %d rounds of"
              + " %d writes): ours %.0f, ours with Iceberg's generic rows %.0f, Iceberg's %.0f;"
              + " ours / Iceberg's %s; ours / ours with generic rows %s; file bytes %,d / %,d / %,d;"
              + " rounds (ours/generic/Iceberg's): %s%n",
          rows,
          rounds,
          writes,
          sum(nanos, 0) / rounds / writes / rows,
          sum(nanos, 1) / rounds / writes / rows,
          sum(nanos, 2) / rounds / writes / rows,
          ratio(nanos, 0, 2),
          ratio(nanos, 0, 1),
          bytes[0],
          bytes[1],
          bytes[2],
          String.join(" ", detail));
    } finally {
      b.tearDown();
    }
  }

  private static double sum(double[][] nanos, int writer) {
    double sum = 0;
    for (double[] round : nanos) {
      sum += round[writer];
    }
    return sum;
  }

  /** The ratio of sums of writer {@code a} over writer {@code b}, and the median of the rounds'. */
  private static String ratio(double[][] nanos, int a, int b) {
    double[] ratios = new double[nanos.length];
    for (int r = 0; r < nanos.length; r++) {
      ratios[r] = nanos[r][a] / nanos[r][b];
    }
    Arrays.sort(ratios);
    return String.format(
        Locale.ROOT,
        "%.3f (rounds: median %.3f, min %.3f, max %.3f)",
        sum(nanos, a) / sum(nanos, b),
        ratios[ratios.length / 2],
        ratios[0],
        ratios[ratios.length - 1]);
  }

  /** This thread's CPU nanoseconds for {@code writes} whole files by {@code write}. */
  private static double cpuNanos(Write write, int writes) throws Exception {
    long start = THREADS.getCurrentThreadCpuTime();
    long bytes = 0;
    for (int i = 0; i < writes; i++) {
      bytes += write.run();
    }
    if (bytes <= 0) {
      throw new IllegalStateException("nothing written");
    }
    return THREADS.getCurrentThreadCpuTime() - start;
  }
}
