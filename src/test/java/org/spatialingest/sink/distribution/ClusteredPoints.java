package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Points as real places are spread: most of them in a few hundred dense areas over land (sizes
 * falling off as city sizes do), the rest scattered over the continents, over two days, in random
 * order (a backfill sorted by id). Generated from a fixed seed and written as newline-delimited
 * records for the file source. Used by {@link GlobalRangesTest} and the distribution benchmark.
 */
public final class ClusteredPoints {
  /** Rough continental boxes (west, south, east, north): where areas and scattered points go. */
  private static final double[][] LAND = {
    {-125, 25, -70, 55},
    {-75, -35, -40, 5},
    {-5, 40, 30, 58},
    {-10, -30, 35, 15},
    {60, 10, 130, 50},
    {115, -38, 150, -20}
  };

  public static final int AREAS = 300;
  private static final double IN_AREAS = 0.85;
  private static final double AREA_SIGMA_DEGREES = 0.25;
  private static final long DAY_MILLIS = 86_400_000L;

  /** 2026-11-01T00:00:00Z: the backfill's first day. */
  private static final long START_MILLIS = 1_793_491_200_000L;

  private final double[][] centres;
  private final double[] weights;
  private final int count;

  private ClusteredPoints(double[][] centres, double[] weights, int count) {
    this.centres = centres;
    this.weights = weights;
    this.count = count;
  }

  /** Writes {@code count} points into {@code files} files under {@code dir}. */
  public static ClusteredPoints write(Path dir, long seed, int count, int files)
      throws IOException {
    Random random = new Random(seed);
    double[][] centres = new double[AREAS][];
    double[] weights = new double[AREAS];
    double total = 0;
    for (int i = 0; i < AREAS; i++) {
      centres[i] = inLand(random);
      weights[i] = 1 / Math.pow(i + 1, 0.8);
      total += weights[i];
    }
    List<String> lines = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      double[] at;
      if (random.nextDouble() < IN_AREAS) {
        double pick = random.nextDouble() * total;
        int area = 0;
        while (area < AREAS - 1 && pick > weights[area]) {
          pick -= weights[area++];
        }
        at =
            new double[] {
              clamp(centres[area][0] + random.nextGaussian() * AREA_SIGMA_DEGREES, -180, 180),
              clamp(centres[area][1] + random.nextGaussian() * AREA_SIGMA_DEGREES, -90, 90)
            };
      } else {
        at = inLand(random);
      }
      long time = START_MILLIS + (long) (random.nextDouble() * 2 * DAY_MILLIS);
      lines.add(KeyedAreas.point("c-" + i, time, at[0], at[1], "p" + i));
    }
    Collections.shuffle(lines, random);
    for (int f = 0; f < files; f++) {
      List<String> part = lines.subList(f * count / files, (f + 1) * count / files);
      Files.write(
          dir.resolve(String.format("part-%02d.json", f)),
          String.join("\n", part).concat("\n").getBytes(StandardCharsets.UTF_8));
    }
    return new ClusteredPoints(centres, weights, count);
  }

  public int count() {
    return count;
  }

  /** The centres of the {@code n} areas with the most points. */
  public List<double[]> densest(int n) {
    Integer[] order = new Integer[AREAS];
    for (int i = 0; i < AREAS; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(weights[b], weights[a]));
    List<double[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(centres[order[i]]);
    }
    return out;
  }

  private static double[] inLand(Random random) {
    double[] box = LAND[random.nextInt(LAND.length)];
    return new double[] {
      box[0] + random.nextDouble() * (box[2] - box[0]),
      box[1] + random.nextDouble() * (box[3] - box[1])
    };
  }

  private static double clamp(double v, double lo, double hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
