package org.spatialingest.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.spatialingest.sizing.Units;

/**
 * One job configuration key: its name, its default as written in YAML ({@code ""} = unset), its
 * description (README's configuration table shows it verbatim; ConfigDocsTest checks), its {@link
 * Type} (how the text is read and written back, and what is allowed, quoted in every error) and
 * where {@link JobConfig} keeps the value. Every key is declared once, in {@link JobOptions};
 * {@link JobConfig#fromMap}, {@link JobConfig#toMap} and {@link JobConfig#KEYS} follow from the
 * declarations. A key ending in {@code .*} passes every key below its prefix through as a map.
 */
public final class JobOption<T> {
  private final String key;
  private final String defaultValue;
  private final Type<T> type;
  private final Function<JobConfig, T> value;
  private final String description;

  JobOption(
      String key,
      String defaultValue,
      Type<T> type,
      Function<JobConfig, T> value,
      String description) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.type = type;
    this.value = value;
    this.description = description;
  }

  public String key() {
    return key;
  }

  /** The default as written in YAML; {@code ""} = unset. */
  public String defaultValue() {
    return defaultValue;
  }

  /** What values are allowed, as quoted in errors. */
  public String allowed() {
    return type.allowed();
  }

  /** README's description of the key (Markdown). */
  public String description() {
    return description;
  }

  boolean isPrefix() {
    return key.endsWith(".*");
  }

  /**
   * True if {@code name} is a key below this prefix key ({@code kafka.properties.x} for {@code
   * kafka.properties.*}).
   */
  boolean covers(String name) {
    String prefix = prefix();
    return isPrefix() && name.startsWith(prefix) && name.length() > prefix.length();
  }

  /**
   * The value of this key in {@code raw}, or of its default; a bad value throws a {@link
   * ConfigException} naming it.
   */
  @SuppressWarnings("unchecked")
  T read(Map<String, String> raw) {
    if (isPrefix()) {
      Map<String, String> out = new TreeMap<>();
      raw.forEach(
          (k, v) -> {
            if (covers(k)) {
              out.put(k.substring(prefix().length()), v);
            }
          });
      return (T) Collections.unmodifiableMap(out);
    }
    String text = raw.get(key);
    return type.read()
        .apply(new Text(key, text == null ? defaultValue : text.trim(), type.allowed()));
  }

  /** Writes this key's value in {@code config} as {@link #read} reads it back. */
  void write(JobConfig config, Map<String, String> out) {
    T v = value.apply(config);
    if (isPrefix()) {
      ((Map<?, ?>) v).forEach((k, x) -> out.put(prefix() + k, (String) x));
    } else {
      out.put(key, type.write().apply(v));
    }
  }

  private String prefix() {
    return key.substring(0, key.length() - 1);
  }

  /** The text of one key as read; its failures name the key and quote what is allowed. */
  record Text(String key, String value, String allowed) {
    ConfigException notAllowed() {
      return new ConfigException(key + " has value '" + value + "'; allowed: " + allowed);
    }

    ConfigException must(String what) {
      return new ConfigException(key + " must " + what + "; allowed: " + allowed);
    }

    <T> T parse(Function<String, T> parser) {
      try {
        return parser.apply(value);
      } catch (RuntimeException e) {
        throw new ConfigException(
            key + " has value '" + value + "': " + e.getMessage() + "; allowed: " + allowed, e);
      }
    }
  }

  /**
   * How a key's text becomes a value and back.
   *
   * @param allowed what is allowed, quoted in errors
   * @param read parses and checks a key's text, throwing through {@link Text}'s methods
   * @param write the text {@code read} reads back as the same value
   */
  record Type<T>(String allowed, Function<Text, T> read, Function<T, String> write) {
    /** Any text, trimmed; empty allowed. */
    public static Type<String> text() {
      return new Type<>("any text", Text::value, Function.identity());
    }

    /** Any non-empty text, trimmed. */
    public static Type<String> nonEmpty(String allowed) {
      return new Type<>(
          allowed,
          t -> {
            if (t.value().isEmpty()) {
              throw t.must("not be empty");
            }
            return t.value();
          },
          Function.identity());
    }

    /** A constant of {@code type}, written lower-case with {@code -} for {@code _}, in any case. */
    public static <E extends Enum<E>> Type<E> oneOf(Class<E> type) {
      List<String> names = new ArrayList<>();
      for (E constant : type.getEnumConstants()) {
        names.add(constant.name().toLowerCase(Locale.ROOT).replace('_', '-'));
      }
      return new Type<>(
          String.join(", ", names),
          t -> {
            String normalized = t.value().toUpperCase(Locale.ROOT).replace('-', '_');
            for (E constant : type.getEnumConstants()) {
              if (constant.name().equals(normalized)) {
                return constant;
              }
            }
            throw t.notAllowed();
          },
          e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }

    /** A value {@code parser} reads (throwing on bad text) and {@code writer} writes back. */
    public static <T> Type<T> parsed(
        String allowed, Function<String, T> parser, Function<T, String> writer) {
      return new Type<>(allowed, t -> t.parse(parser), writer);
    }

    public static final Type<Boolean> BOOLEAN =
        new Type<>(
            "true, false",
            t ->
                switch (t.value().toLowerCase(Locale.ROOT)) {
                  case "true" -> true;
                  case "false" -> false;
                  default -> throw t.notAllowed();
                },
            b -> Boolean.toString(b));

    /**
     * A value {@code parser} reads and {@code ok} accepts; one it does not is refused with {@code
     * failure} ({@code "must <failure>"}), or as not allowed when that is null.
     */
    static <T> Type<T> checked(
        String allowed,
        Function<String, T> parser,
        Predicate<T> ok,
        String failure,
        Function<T, String> writer) {
      return new Type<>(
          allowed,
          t -> {
            T v = t.parse(parser);
            if (!ok.test(v)) {
              throw failure == null ? t.notAllowed() : t.must(failure);
            }
            return v;
          },
          writer);
    }

    public static final Type<Long> POSITIVE_BYTES =
        checked(
            "size > 0, e.g. 128MB, 64MiB",
            Units::parseBytes,
            b -> b > 0,
            "be > 0",
            b -> Long.toString(b));

    public static final Type<Long> NON_NEGATIVE_BYTES =
        checked(
            "size >= 0, e.g. 5MB; 0 = no cap",
            Units::parseBytes,
            b -> b >= 0,
            null,
            b -> Long.toString(b));

    public static final Type<Duration> POSITIVE_DURATION =
        checked(
            "duration > 0, e.g. 10s",
            Units::parseDuration,
            d -> !d.isZero() && !d.isNegative(),
            "be > 0",
            d ->
                d.toSeconds() >= 3600 && d.toMillis() % 3_600_000 == 0
                    ? d.toHours() + "h"
                    : d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms");

    public static final Type<Double> NON_NEGATIVE_DOUBLE =
        checked(
            "finite number >= 0",
            Double::parseDouble,
            v -> v >= 0 && !Double.isInfinite(v),
            null,
            v -> Double.toString(v));

    public static final Type<Integer> POSITIVE_INT =
        checked("positive integer", Integer::parseInt, v -> v > 0, null, v -> Integer.toString(v));

    public static final Type<Integer> NON_NEGATIVE_INT =
        checked("integer >= 0", Integer::parseInt, v -> v >= 0, null, v -> Integer.toString(v));

    public static final Type<Long> POSITIVE_LONG =
        checked("positive integer", Long::parseLong, v -> v > 0, null, v -> Long.toString(v));

    public static final Type<Integer> PARALLELISM =
        checked(
            "0 (environment default) or a positive integer",
            Integer::parseInt,
            v -> v >= 0,
            null,
            v -> Integer.toString(v));

    /** The keys below a prefix key ({@code kafka.properties.*}), passed through as they are. */
    public static final Type<Map<String, String>> PASS_THROUGH =
        new Type<>(
            "any key below the prefix",
            t -> {
              throw new IllegalStateException("a prefix key is read by JobOption.read");
            },
            m -> {
              throw new IllegalStateException("a prefix key is written by JobOption.write");
            });
  }
}
