package org.spatialingest.geometry;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Base64;
import java.util.Locale;
import org.spatialingest.config.InputConfig.InputFormat;

/**
 * Reject messages for a geometry (or record) in another encoding than {@code input.format} expects:
 * what it looks like, what the configured format accepts, and the {@code input.format} value that
 * would read it. Used on the failure path only, so records that parse never pay for it.
 */
final class FormatHint {
  private FormatHint() {}

  /**
   * The message for a geometry string that failed to parse under {@code format}, or null when the
   * string looks like nothing the format rejects (then the parser's own error stands, e.g. WKT cut
   * short under {@code geojson}).
   */
  static String forText(String text, InputFormat format) {
    InputFormat look = look(text);
    if (look == null
        || look == format
        || (format == InputFormat.GEOJSON && look == InputFormat.WKT)) {
      if (look == InputFormat.GEOJSON) { // GeoJSON as a quoted string under geojson or feature
        return "geometry is a string holding JSON text; input.format is "
            + value(format)
            + " (accepts "
            + accepts(format)
            + "): send the GeoJSON object itself, not a string";
      }
      return null;
    }
    return "geometry is a string that looks like "
        + describe(look)
        + "; input.format is "
        + value(format)
        + " (accepts "
        + accepts(format)
        + ")"
        + suggestion(look, format);
  }

  /** The message for a geometry that is not a string under a format that needs one. */
  static String forNode(JsonNode node, InputFormat format) {
    String what =
        node.isObject() && node.has("type")
            ? "a GeoJSON object"
            : "a JSON " + node.getNodeType().name().toLowerCase(Locale.ROOT);
    return "geometry is "
        + what
        + "; input.format is "
        + value(format)
        + " (accepts "
        + accepts(format)
        + ")"
        + (what.startsWith("a GeoJSON") ? "; set input.format: geojson" : "");
  }

  /**
   * For a record without {@code "type":"Feature"} under {@code feature}: the format its geometry
   * suggests.
   */
  static String forNonFeature(JsonNode geometry) {
    String base =
        "input.format is feature (accepts "
            + accepts(InputFormat.FEATURE)
            + ") but the record has no"
            + " \"type\":\"Feature\"";
    if (geometry == null) {
      return base;
    }
    InputFormat look =
        geometry.isObject()
            ? InputFormat.GEOJSON
            : geometry.isTextual() ? look(geometry.asText()) : null;
    return look == null
        ? base
        : base
            + "; for a record with a top-level event_time and "
            + describe(look)
            + " geometry set input.format: "
            + value(look);
  }

  /**
   * For a GeoJSON Feature under a record format: {@code event_time} belongs in its properties
   * there.
   */
  static String forFeature(InputFormat format) {
    return "'event_time' is missing; the record is a GeoJSON Feature (\"type\":\"Feature\") but input.format is "
        + value(format)
        + " (accepts "
        + accepts(format)
        + " in a record with a top-level event_time); set"
        + " input.format: feature";
  }

  /** What {@code format} accepts as the geometry. */
  static String accepts(InputFormat format) {
    return switch (format) {
      case GEOJSON -> "a GeoJSON object or WKT";
      case WKT -> "a WKT string";
      case WKB_HEX -> "a hex string of WKB";
      case WKB_BASE64 -> "a base64 string of WKB";
      case FEATURE -> "a GeoJSON Feature with a GeoJSON geometry object";
    };
  }

  /**
   * The config value of a format, spelled as {@code JobConfig} reads enum values (lower case, '-'
   * for '_').
   */
  static String value(InputFormat format) {
    return format.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static String describe(InputFormat look) {
    return switch (look) {
      case WKB_HEX -> "WKB hex";
      case WKB_BASE64 -> "WKB base64";
      case WKT -> "WKT";
      case GEOJSON, FEATURE -> "GeoJSON";
    };
  }

  private static String suggestion(InputFormat look, InputFormat format) {
    if (format == InputFormat.FEATURE) {
      return ""; // a Feature's geometry is GeoJSON in every format that reads Features
    }
    return switch (look) {
      case WKT -> "; set input.format: wkt (or geojson, which also reads WKT)";
      case GEOJSON, FEATURE ->
          "; set input.format: geojson and send the object itself, not a string";
      default -> "; set input.format: " + value(look);
    };
  }

  /**
   * The encoding {@code text} looks like, or null. Cheap checks first; base64 is decoded (failure
   * path only).
   */
  static InputFormat look(String text) {
    String t = text.strip();
    if (t.startsWith("{")) {
      return InputFormat.GEOJSON;
    }
    if (isWkbHex(t)) {
      return InputFormat.WKB_HEX;
    }
    if (isWkt(t)) {
      return InputFormat.WKT;
    }
    if (isWkbBase64(t)) {
      return InputFormat.WKB_BASE64;
    }
    return null;
  }

  /** Even-length hex of at least a WKB header (byte order 00 or 01, then a 4-byte type). */
  private static boolean isWkbHex(String t) {
    if (t.length() < 10
        || (t.length() & 1) != 0
        || t.charAt(0) != '0'
        || (t.charAt(1) != '0' && t.charAt(1) != '1')) {
      return false;
    }
    for (int i = 0; i < t.length(); i++) {
      if (Character.digit(t.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  private static final String[] WKT_TAGS = {
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
    "LINEARRING",
    "SRID="
  };

  private static boolean isWkt(String t) {
    for (String tag : WKT_TAGS) {
      if (t.regionMatches(true, 0, tag, 0, tag.length())) {
        return true;
      }
    }
    return false;
  }

  /** Base64 that decodes to at least a WKB header with byte order 0 or 1. */
  private static boolean isWkbBase64(String t) {
    if (t.length() < 8) {
      return false;
    }
    try {
      byte[] b = Base64.getDecoder().decode(t);
      return b.length >= 5 && (b[0] == 0 || b[0] == 1);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
