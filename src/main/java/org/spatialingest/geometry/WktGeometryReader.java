package org.spatialingest.geometry;

import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.io.ParseException;
import org.locationtech.jts.io.WKTReader;

/**
 * WKT input through JTS's {@link WKTReader}; an unknown tag is {@code unknown_geometry_type}. Not
 * thread-safe.
 */
final class WktGeometryReader {
  private final WKTReader reader;

  WktGeometryReader(GeometryFactory factory) {
    this.reader = new WKTReader(factory);
  }

  Geometry read(String text) throws RecordRejectedException {
    try {
      return reader.read(text);
    } catch (ParseException e) {
      throw GeometryDecoder.refused("WKT", "Unknown geometry type", e);
    } catch (RuntimeException e) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "WKT: " + e.getMessage());
    }
  }
}
