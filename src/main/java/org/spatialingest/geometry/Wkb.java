package org.spatialingest.geometry;

import java.util.Base64;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.io.ParseException;
import org.locationtech.jts.io.WKBReader;

/**
 * WKB input, as hex ({@code wkb-hex}) or base64 ({@code wkb-base64}) text or as bytes: a
 * hand-written fast path for the 21-byte 2D point (byte order, type 1, two doubles), everything
 * else through JTS's {@link WKBReader}. Not thread-safe (one per parser).
 */
final class Wkb {
  private final GeometryFactory factory;
  private final WKBReader reader;

  Wkb(GeometryFactory factory) {
    this.factory = factory;
    this.reader = new WKBReader(factory);
  }

  /** The geometry of a hex string (either case). */
  Geometry readHex(String hex) throws RecordRejectedException {
    byte[] bytes = fromHex(hex);
    if (bytes == null) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "WKB: not an even-length hex string");
    }
    return read(bytes);
  }

  /** The geometry of a base64 string (the basic alphabet, padding as RFC 4648). */
  Geometry readBase64(String base64) throws RecordRejectedException {
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new RecordRejectedException(
          RejectReason.UNPARSEABLE_GEOMETRY, "WKB: " + e.getMessage());
    }
    return read(bytes);
  }

  Geometry read(byte[] wkb) throws RecordRejectedException {
    if (isPoint2d(wkb)) {
      return factory.createPoint(new Coordinate(pointX(wkb), pointY(wkb)));
    }
    try {
      return reader.read(wkb);
    } catch (ParseException e) {
      throw GeometryDecoder.refused("WKB", "Unknown WKB type", e);
    } catch (RuntimeException e) {
      // truncated or inconsistent input surfaces as array/argument exceptions from the reader
      throw new RecordRejectedException(RejectReason.UNPARSEABLE_GEOMETRY, "WKB: " + e);
    }
  }

  /** A 2D point in either byte order (ISO type 1; EWKB without SRID flag is the same bytes). */
  static boolean isPoint2d(byte[] b) {
    if (b.length != 21) {
      return false;
    }
    if (b[0] == 1) {
      return b[1] == 1 && b[2] == 0 && b[3] == 0 && b[4] == 0;
    }
    return b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 1;
  }

  static double pointX(byte[] b) {
    return Double.longBitsToDouble(readLong(b, 5, b[0] == 1));
  }

  static double pointY(byte[] b) {
    return Double.longBitsToDouble(readLong(b, 13, b[0] == 1));
  }

  private static long readLong(byte[] b, int off, boolean littleEndian) {
    long v = 0;
    if (littleEndian) {
      for (int i = 7; i >= 0; i--) {
        v = (v << 8) | (b[off + i] & 0xFFL);
      }
    } else {
      for (int i = 0; i < 8; i++) {
        v = (v << 8) | (b[off + i] & 0xFFL);
      }
    }
    return v;
  }

  /** Hex (either case) to bytes; null if not hex of even length. */
  static byte[] fromHex(String s) {
    int n = s.length();
    if ((n & 1) != 0) {
      return null;
    }
    byte[] out = new byte[n / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = digit(s.charAt(2 * i));
      int lo = digit(s.charAt(2 * i + 1));
      if (hi < 0 || lo < 0) {
        return null;
      }
      out[i] = (byte) ((hi << 4) | lo);
    }
    return out;
  }

  /**
   * ASCII hex digit values (-1 for anything else), so the common case skips {@link
   * Character#digit}.
   */
  private static final byte[] HEX = new byte[128];

  static {
    for (int c = 0; c < 128; c++) {
      HEX[c] = (byte) Character.digit(c, 16);
    }
  }

  /** {@code Character.digit(c, 16)}, by table for ASCII. */
  private static int digit(char c) {
    return c < 128 ? HEX[c] : Character.digit(c, 16);
  }
}
