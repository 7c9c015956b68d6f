package org.spatialingest.local;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;
import java.util.Random;

/**
 * Makes mixed telemetry records of the documented contract: points from a few moving vehicles and,
 * every so often, a polygon "boundary refresh" of thousands of vertices (a star-shaped ring, so it
 * is valid and wide). Deterministic for a seed, so tests can regenerate what they sent.
 */
public final class TelemetryGenerator {
  private final Random random;
  private final int vehicles;
  private final int polygonEvery;
  private final int polygonVertices;
  private final double[] lon;
  private final double[] lat;
  private long sequence;
  private long batteryFrom = Long.MAX_VALUE;

  /**
   * Where the vehicles start: uniformly in a lon/lat box, except a share of them within 0.1 degrees
   * of a hot spot.
   *
   * @param hotShare share of the vehicles (so of the point records) at the hot spot, 0 to 1
   */
  public record Area(
      double west,
      double south,
      double east,
      double north,
      double hotShare,
      double hotLon,
      double hotLat) {
    /** Europe-ish, no hot spot: the default. */
    public static final Area EUROPE = new Area(-10, 35, 30, 60, 0, 0, 0);

    /** The inhabited latitudes of the whole globe, no hot spot. */
    public static final Area WORLD = new Area(-179, -60, 179, 75, 0, 0, 0);

    /** This area with {@code share} of the vehicles around Paris. */
    public Area withHotSpot(double share) {
      return new Area(west, south, east, north, share, 2.35, 48.85);
    }
  }

  /**
   * @param polygonEvery one record in this many is a polygon refresh (0 = never)
   * @param polygonVertices vertices of each polygon ring
   */
  public TelemetryGenerator(long seed, int vehicles, int polygonEvery, int polygonVertices) {
    this(seed, vehicles, polygonEvery, polygonVertices, Area.EUROPE);
  }

  /** As the four-argument constructor, with the vehicles starting in {@code area}. */
  public TelemetryGenerator(
      long seed, int vehicles, int polygonEvery, int polygonVertices, Area area) {
    this.random = new Random(seed);
    this.vehicles = vehicles;
    this.polygonEvery = polygonEvery;
    this.polygonVertices = polygonVertices;
    this.lon = new double[vehicles];
    this.lat = new double[vehicles];
    int hot = (int) Math.round(area.hotShare() * vehicles);
    for (int i = 0; i < vehicles; i++) {
      if (i < hot) {
        lon[i] = area.hotLon() + (random.nextDouble() - 0.5) * 0.2;
        lat[i] = area.hotLat() + (random.nextDouble() - 0.5) * 0.2;
      } else {
        lon[i] = area.west() + random.nextDouble() * (area.east() - area.west());
        lat[i] = area.south() + random.nextDouble() * (area.north() - area.south());
      }
    }
  }

  /**
   * From record {@code n} on, point records also carry {@code battery_pct} (an integer): a property
   * that appears mid-run, for the demo of {@code input.typed-properties: auto}. Off by default.
   */
  public TelemetryGenerator batteryFrom(long n) {
    this.batteryFrom = n;
    return this;
  }

  /** One generated record. */
  public record Record(String id, byte[] json, boolean polygon, double x, double y) {}

  public Record next(long eventTimeMillis) {
    long n = sequence++;
    String id = "rec-" + n;
    String time = Instant.ofEpochMilli(eventTimeMillis).toString();
    if (polygonEvery > 0 && n % polygonEvery == polygonEvery - 1) {
      int v = random.nextInt(vehicles);
      String json =
          "{\"id\":\""
              + id
              + "\",\"event_time\":\""
              + time
              + "\",\"geometry\":"
              + starPolygon(lon[v], lat[v])
              + ",\"properties\":{\"kind\":\"boundary_refresh\",\"region\":\"r"
              + v
              + "\"}}";
      return new Record(id, json.getBytes(StandardCharsets.UTF_8), true, lon[v], lat[v]);
    }
    int v = (int) (n % vehicles);
    lon[v] = clamp(lon[v] + (random.nextDouble() - 0.5) * 0.01, -179.9, 179.9);
    lat[v] = clamp(lat[v] + (random.nextDouble() - 0.5) * 0.01, -89.9, 89.9);
    String json =
        String.format(
            Locale.ROOT,
            "{\"id\":\"%s\",\"event_time\":\"%s\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.7f,%.7f]},"
                + "\"properties\":{\"vehicle\":\"v%d\",\"speed_kmh\":%.1f%s}}",
            id,
            time,
            lon[v],
            lat[v],
            v,
            random.nextDouble() * 120,
            n >= batteryFrom ? ",\"battery_pct\":" + (100 - (n / vehicles) % 100) : "");
    return new Record(id, json.getBytes(StandardCharsets.UTF_8), false, lon[v], lat[v]);
  }

  private String starPolygon(double cx, double cy) {
    StringBuilder sb = new StringBuilder(polygonVertices * 28 + 64);
    sb.append("{\"type\":\"Polygon\",\"coordinates\":[[");
    String firstVertex = null;
    for (int i = 0; i < polygonVertices; i++) {
      double angle = 2 * Math.PI * i / polygonVertices;
      double r = (i % 2 == 0 ? 0.2 : 0.12) * (0.9 + 0.1 * random.nextDouble());
      String vertex =
          String.format(
              Locale.ROOT,
              "[%.7f,%.7f]",
              clamp(cx + r * Math.cos(angle), -180, 180),
              clamp(cy + r * Math.sin(angle), -90, 90));
      if (firstVertex == null) {
        firstVertex = vertex;
      }
      sb.append(vertex).append(',');
    }
    sb.append(firstVertex).append("]]}"); // a ring ends on its first vertex
    return sb.toString();
  }

  private static double clamp(double v, double min, double max) {
    return Math.max(min, Math.min(max, v));
  }
}
