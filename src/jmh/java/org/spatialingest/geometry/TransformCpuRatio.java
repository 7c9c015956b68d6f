package org.spatialingest.geometry;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link TransformBenchmark}'s {@code chain} against {@code bareStreamingParse} (the issue's
 * reference) and {@code bareWholeRecordParse} in interleaved rounds, timed by the thread's CPU time
 * rather than the wall clock: on a machine shared with other work (where JMH's wall-clock
 * throughput swings by ±100 %) the ratio still means something. Each round runs all three, in
 * alternating order, for about {@code roundMillis} of CPU each; the report is the median ratio with
 * its min-max over the rounds.
 *
 * <p>Run (after {@code mvn -o -Pjmh test-compile}): {@code java -cp <test classpath>
 * org.spatialingest.geometry.TransformCpuRatio [rounds=15] [roundMillis=300]
 * [inputs=point-geojson,point-wkb-hex]} (see src/site/markdown/benchmarks.md).
 */
public final class TransformCpuRatio {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final Blackhole SINK =
      new Blackhole(
          "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

  private TransformCpuRatio() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
    long roundNanos = (args.length > 1 ? Long.parseLong(args[1]) : 300) * 1_000_000L;
    String[] inputs =
        args.length > 2 ? args[2].split(",") : new String[] {"point-geojson", "point-wkb-hex"};
    for (String input : inputs) {
      TransformBenchmark b = new TransformBenchmark();
      b.input = input;
      b.setUp();
      Callable<Object> chain = b::chain;
      Callable<Object> bare = b::bareStreamingParse;
      Callable<Object> whole = b::bareWholeRecordParse;
      for (int i = 0; i < 3; i++) { // warm-up: JIT every path
        nanosPerOp(chain, roundNanos);
        nanosPerOp(bare, roundNanos);
        nanosPerOp(whole, roundNanos);
      }
      double[] ratios = new double[rounds];
      double[] wholeRatios = new double[rounds];
      List<String> detail = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        double c;
        double s;
        double w;
        if (r % 2 == 0) {
          c = nanosPerOp(chain, roundNanos);
          s = nanosPerOp(bare, roundNanos);
          w = nanosPerOp(whole, roundNanos);
        } else {
          w = nanosPerOp(whole, roundNanos);
          s = nanosPerOp(bare, roundNanos);
          c = nanosPerOp(chain, roundNanos);
        }
        ratios[r] = c / s;
        wholeRatios[r] = c / w;
        detail.add(String.format(Locale.ROOT, "%.0f/%.0f/%.0f", c, s, w));
      }
      System.out.printf(
          Locale.ROOT,
          "%s: chain / bareStreamingParse (CPU ns per record) %s; chain / bareWholeRecordParse %s;"
              + " over %d rounds; rounds (chain/bare/whole ns): %s%n",
          input,
          medianMinMax(ratios),
          medianMinMax(wholeRatios),
          rounds,
          String.join(" ", detail));
    }
  }

  private static String medianMinMax(double[] ratios) {
    double[] sorted = ratios.clone();
    Arrays.sort(sorted);
    return String.format(
        Locale.ROOT,
        "median %.2fx, min %.2fx, max %.2fx",
        sorted[sorted.length / 2],
        sorted[0],
        sorted[sorted.length - 1]);
  }

  /**
   * CPU nanoseconds per call of {@code op}, over about {@code cpuNanos} of this thread's CPU time.
   */
  private static double nanosPerOp(Callable<Object> op, long cpuNanos) throws Exception {
    long start = THREADS.getCurrentThreadCpuTime();
    long end = start + cpuNanos;
    long ops = 0;
    long now;
    do {
      for (int i = 0; i < 1_000; i++) {
        SINK.consume(op.call());
      }
      ops += 1_000;
      now = THREADS.getCurrentThreadCpuTime();
    } while (now < end);
    return (now - start) / (double) ops;
  }
}
