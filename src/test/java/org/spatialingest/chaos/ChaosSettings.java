package org.spatialingest.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * What one chaos run does: how many records, which faults in which (seeded, random) order, the
 * pauses between them. Read from system properties so the Maven profile and a developer can size
 * it: {@code chaos.rows}, {@code chaos.faults} ({@code short}, {@code full} = every kind {@code
 * chaos.rounds} times, default 2, or a comma-separated list of {@link FaultKind} names), {@code
 * chaos.seed}, {@code chaos.fault-seconds} (the expected time per fault, which sets the produce
 * rate so that the minimum of records lasts about as long as the faults; the producer goes on until
 * the last fault is over anyway).
 */
record ChaosSettings(
    int rows,
    List<FaultKind> faults,
    long seed,
    Duration minGap,
    Duration maxGap,
    Duration expectedPerFault,
    int malformedEvery) {

  static ChaosSettings fromSystemProperties() {
    String spec = System.getProperty("chaos.faults", "short");
    boolean shortRun = spec.equals("short");
    // the short run: 33,600 records over 6 x 14 s, the rate (400/s) it always had. Its six faults
    // end ~87 s after the first record (CI of 2026-12-04: at record 34,622); the 48,000 of before
    // kept the producer going ~33 s after the last fault with nothing else happening. It goes on
    // until the last fault is over anyway
    int rows = Integer.getInteger("chaos.rows", shortRun ? 33_600 : 48_000);
    long seed = Long.getLong("chaos.seed", 20261130L);
    List<FaultKind> faults = new ArrayList<>();
    if (shortRun) {
      faults.addAll(FaultKind.SHORT);
    } else if (spec.equals("full")) {
      for (int round = 0; round < Integer.getInteger("chaos.rounds", 2); round++) {
        faults.addAll(Arrays.asList(FaultKind.values()));
      }
    } else {
      for (String name : spec.split(",")) {
        faults.add(FaultKind.valueOf(name.trim()));
      }
    }
    Collections.shuffle(faults, new Random(seed));
    return new ChaosSettings(
        rows,
        List.copyOf(faults),
        seed,
        // the short run is part of every `mvn verify`: shorter pauses, the same faults
        Duration.ofSeconds(shortRun ? 1 : 2),
        Duration.ofSeconds(shortRun ? 4 : 8),
        Duration.ofSeconds(Integer.getInteger("chaos.fault-seconds", shortRun ? 14 : 35)),
        100);
  }

  /** Records per second, so that production lasts about as long as the faults. */
  double ratePerSecond() {
    double seconds = Math.max(30, faults.size() * (expectedPerFault.toSeconds()));
    return rows / seconds;
  }
}
