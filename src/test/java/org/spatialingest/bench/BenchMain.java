package org.spatialingest.bench;

/**
 * A benchmark harness's {@code main}: runs it and exits 0, or prints "BENCHMARK FAILED" with the
 * cause and exits 1 (the bench profile's exec fails the build then).
 */
final class BenchMain {
  private BenchMain() {}

  /** A harness's run over its arguments. */
  interface Harness {
    void run(String[] args) throws Exception;
  }

  static void run(Harness harness, String[] args) {
    try {
      harness.run(args);
    } catch (Throwable t) {
      System.out.println(
          "[bench] BENCHMARK FAILED: " + (t.getMessage() == null ? t.toString() : t.getMessage()));
      t.printStackTrace(System.out);
      System.exit(1);
    }
    System.exit(0);
  }
}
