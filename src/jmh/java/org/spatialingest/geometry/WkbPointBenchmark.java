package org.spatialingest.geometry;

import java.util.concurrent.TimeUnit;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.io.WKBReader;
import org.locationtech.jts.io.WKBWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The 21-byte WKB point alone: reading the two doubles directly, the fast path building the JTS
 * point, and JTS's general {@link WKBReader}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx1g"})
public class WkbPointBenchmark {
  private final GeometryFactory factory = new GeometryFactory();
  private final byte[] bytes =
      new WKBWriter(2).write(factory.createPoint(new Coordinate(13.4050012, 52.5200066)));
  private final Wkb fast = new Wkb(factory);
  private final WKBReader general = new WKBReader(factory);

  /** Two doubles straight from the bytes. */
  @Benchmark
  public double twoDoubles() {
    return Wkb.pointX(bytes) + Wkb.pointY(bytes);
  }

  /**
   * The fast path as the parser uses it: check the header, read the doubles, build the JTS point.
   */
  @Benchmark
  public Geometry fastPathToJtsPoint() throws Exception {
    return fast.read(bytes);
  }

  @Benchmark
  public Geometry jtsWkbReader() throws Exception {
    return general.read(bytes);
  }
}
