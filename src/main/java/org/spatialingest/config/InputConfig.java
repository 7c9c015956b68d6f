package org.spatialingest.config;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How records are read: where from ({@code source}), the geometry encoding ({@code input.format})
 * and which {@code properties} become typed columns ({@code input.typed-properties}).
 *
 * @param filePath null for Kafka, the file or directory for {@code source: file:<path>}
 * @param typedProperties the declared typed properties (none under {@code auto})
 * @param autoColumns {@code input.typed-properties: auto}: the properties the stream sends become
 *     columns as they arrive; null when declared
 * @param maxFilesPerCheckpoint a file source's files handed to its readers between two completed
 *     checkpoints, at most ({@code source.file.max-files-per-checkpoint}); 0: no cap
 * @param maxBytesPerCheckpoint the same in bytes, a soft cap: the file that crosses it goes through
 *     whole ({@code source.file.max-bytes-per-checkpoint}); 0: no cap
 */
public record InputConfig(
    String filePath,
    InputFormat format,
    List<TypedProperty> typedProperties,
    AutoColumns autoColumns,
    FileLastLine fileLastLine,
    int maxFilesPerCheckpoint,
    long maxBytesPerCheckpoint)
    implements Serializable {

  /**
   * What a file source does with a last line that has no newline yet (key {@code
   * source.file.last-line}): {@code HOLD} leaves it for a later run (the file may still be written;
   * the rest of the line would come later), {@code READ} reads it (the file is final).
   */
  public enum FileLastLine {
    HOLD,
    READ
  }

  /** The value of {@code input.typed-properties}: {@code auto}, or the declared list. */
  public record TypedProperties(boolean auto, List<TypedProperty> declared)
      implements Serializable {}

  /**
   * Automatic property columns ({@code input.typed-properties: auto}).
   *
   * @param allow the property names (lower-cased) that may become columns; empty: any
   * @param maxColumns how many property columns the table may have; names past it stay in {@code
   *     properties}
   */
  public record AutoColumns(List<String> allow, int maxColumns) implements Serializable {
    public boolean allows(String column) {
      return allow.isEmpty() || allow.contains(column);
    }
  }

  public static final String AUTO = "auto";

  /** The largest {@code input.auto-columns.max}: a wide schema costs every file and reader. */
  public static final int MAX_AUTO_COLUMNS = 1000;

  /** The encoding of a record's geometry. */
  public enum InputFormat {
    /**
     * JSON record, {@code geometry} a GeoJSON geometry object (a WKT string is also accepted, as
     * before).
     */
    GEOJSON,
    /** JSON record, {@code geometry} a WKT string. */
    WKT,
    /** JSON record, {@code geometry} a hex string of WKB (ISO or EWKB, either byte order). */
    WKB_HEX,
    /** JSON record, {@code geometry} a base64 string of WKB. */
    WKB_BASE64,
    /**
     * A GeoJSON {@code Feature}: top-level {@code id}, {@code geometry}, {@code
     * properties.event_time}.
     */
    FEATURE
  }

  /**
   * Column types a property can be declared as. {@code int} and {@code float} can later be
   * re-declared {@code long} and {@code double}: the table widens them in place (Iceberg's type
   * promotion), old rows keep their values.
   */
  public enum PropertyType {
    STRING,
    LONG,
    DOUBLE,
    BOOLEAN,
    INT,
    FLOAT;

    /** The declared spelling: {@code long}, {@code double}, ... */
    public String spelling() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Every spelling, comma separated, for messages and docs. */
    public static String spellings() {
      return String.join(
          ", ", java.util.Arrays.stream(values()).map(PropertyType::spelling).toList());
    }
  }

  /**
   * One property promoted to a typed, optional column, appended to the table schema in declared
   * order.
   */
  public record TypedProperty(String name, PropertyType type) implements Serializable {}

  /**
   * Column names the telemetry table already has; a typed property cannot reuse one (xmin..ymax:
   * the bbox columns of tables created before the bbox struct, kept in those tables).
   */
  public static final Set<String> RESERVED =
      Set.of(
          "id",
          "event_time",
          "ingest_time",
          "geometry",
          "geometry_type",
          "bbox",
          "xmin",
          "ymin",
          "xmax",
          "ymax",
          "hilbert",
          "properties",
          "region",
          "source",
          "source_offset");

  private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");

  public boolean fileSource() {
    return filePath != null;
  }

  public String sourceSpec() {
    return sourceSpec(filePath);
  }

  /**
   * The {@code source} value for a file path, null meaning Kafka; {@link #parseSource} reads it
   * back.
   */
  static String sourceSpec(String filePath) {
    return filePath == null ? "kafka" : "file:" + filePath;
  }

  static String parseSource(String value) {
    if (value.equals("kafka")) {
      return null;
    }
    if (value.startsWith("file:") && value.length() > "file:".length()) {
      return value.substring("file:".length());
    }
    throw new IllegalArgumentException("must be 'kafka' or 'file:<path>'");
  }

  /**
   * Parses {@code speed:double,vehicle:string}; names are lower-case identifiers, unique, not a
   * base column.
   */
  static TypedProperties parseTyped(String value) {
    if (value.trim().equalsIgnoreCase(AUTO)) {
      return new TypedProperties(true, List.of());
    }
    return new TypedProperties(false, parseDeclared(value));
  }

  private static List<TypedProperty> parseDeclared(String value) {
    List<TypedProperty> out = new ArrayList<>();
    if (value.isBlank()) {
      return List.of();
    }
    Set<String> seen = new HashSet<>();
    for (String item : value.split(",")) {
      String[] parts = item.trim().split(":");
      if (parts.length != 2) {
        throw new IllegalArgumentException("'" + item.trim() + "' is not name:type");
      }
      String name = parts[0].trim();
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("'" + name + "' is not a lower-case identifier");
      }
      if (RESERVED.contains(name)) {
        throw new IllegalArgumentException("'" + name + "' is already a column of the table");
      }
      if (!seen.add(name)) {
        throw new IllegalArgumentException("'" + name + "' is declared twice");
      }
      PropertyType type;
      try {
        type = PropertyType.valueOf(parts[1].trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "type '"
                + parts[1].trim()
                + "' of '"
                + name
                + "' is not one of "
                + PropertyType.spellings());
      }
      out.add(new TypedProperty(name, type));
    }
    return List.copyOf(out);
  }

  /**
   * The {@code input.typed-properties} value {@link #parseTyped} reads back as {@code
   * typedProperties}.
   */
  static String typedSpec(TypedProperties typed) {
    if (typed.auto()) {
      return AUTO;
    }
    List<String> parts = new ArrayList<>();
    for (TypedProperty p : typed.declared()) {
      parts.add(p.name() + ":" + p.type().spelling());
    }
    return String.join(",", parts);
  }

  /** Parses {@code input.auto-columns.allow}: lower-case identifiers, comma separated. */
  static List<String> parseNames(String value) {
    List<String> out = new ArrayList<>();
    for (String item : value.split(",")) {
      String name = item.trim();
      if (name.isEmpty()) {
        continue;
      }
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("'" + name + "' is not a lower-case identifier");
      }
      if (!out.contains(name)) {
        out.add(name);
      }
    }
    return List.copyOf(out);
  }
}
