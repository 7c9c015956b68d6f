package org.spatialingest.cli;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import org.apache.flink.annotation.docs.Documentation;
import org.apache.flink.client.cli.ClientOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;
import org.spatialingest.config.ConfigException;

/**
 * The Flink options a local run can be given: every public static {@link ConfigOption} declared by
 * a class named {@code *Options} or {@code *OptionsInternal} in the Flink modules of the local
 * cluster (flink-core, flink-runtime, flink-clients; found through one class of each, so the list
 * is Flink's own and never copied here). Fallback and deprecated keys count as known; keys with a
 * {@code <name>} part (metrics reporters, ...) are matched as patterns.
 */
final class FlinkOptionCatalog {
  private static final List<Class<?>> MODULE_ANCHORS =
      List.of(CoreOptions.class, ShuffleServiceOptions.class, ClientOptions.class);
  private static volatile FlinkOptionCatalog loaded;

  private final Map<String, ConfigOption<?>> byKey = new TreeMap<>();
  private final List<Pattern> patterns = new ArrayList<>();

  private FlinkOptionCatalog() {}

  /** The catalog of this classpath, scanned once. */
  static FlinkOptionCatalog get() {
    FlinkOptionCatalog c = loaded;
    if (c == null) {
      c = new FlinkOptionCatalog();
      for (Class<?> anchor : MODULE_ANCHORS) {
        c.scanModuleOf(anchor);
      }
      loaded = c;
    }
    return c;
  }

  /**
   * Splits {@code KEY=VALUE} arguments ({@code --flink}) and checks each: the key must be known,
   * the value must parse as the option's type. Throws {@link ConfigException} naming the first bad
   * one. (Should Flink's classes come from a folder rather than jars, as in some IDE set-ups, the
   * catalog is empty and keys pass unchecked.)
   *
   * @return the options in argument order
   */
  Map<String, String> validate(List<String> arguments) {
    Map<String, String> options = new LinkedHashMap<>();
    for (String argument : arguments) {
      int eq = argument.indexOf('=');
      if (eq <= 0) {
        throw new ConfigException(
            "--flink '"
                + argument
                + "' must look like KEY=VALUE, e.g. --flink "
                + "taskmanager.numberOfTaskSlots=4");
      }
      String key = argument.substring(0, eq).trim();
      String value = argument.substring(eq + 1).trim();
      if (!byKey.isEmpty() && !isKnown(key)) {
        throw new ConfigException(
            "--flink "
                + key
                + ": Flink has no option '"
                + key
                + "'"
                + closest(key).map(k -> "; did you mean " + k + "?").orElse(""));
      }
      ConfigOption<?> option = byKey.get(key);
      if (option != null) {
        checkValue(option, key, value);
      }
      options.put(key, value);
    }
    return options;
  }

  private static void checkValue(ConfigOption<?> option, String key, String value) {
    Configuration probe = new Configuration();
    probe.setString(key, value);
    try {
      probe.get(option);
    } catch (IllegalArgumentException e) {
      StringBuilder why = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        String message = t.getMessage() == null ? "" : t.getMessage().replaceAll("\\.$", "");
        if (!message.isEmpty() && why.indexOf(message) < 0) {
          why.append(why.length() == 0 ? "" : ": ").append(message);
        }
      }
      throw new ConfigException(
          "--flink "
              + key
              + "="
              + value
              + ": invalid value for Flink option '"
              + key
              + "' ("
              + why
              + ")",
          e);
    }
  }

  /** True when Flink declares the key, or it fits a declared {@code <name>} pattern. */
  private boolean isKnown(String key) {
    return byKey.containsKey(key) || patterns.stream().anyMatch(p -> p.matcher(key).matches());
  }

  /** The known key closest to {@code key} (edit distance at most 3), for a "did you mean" hint. */
  private Optional<String> closest(String key) {
    String best = null;
    int bestDistance = 4;
    for (String known : byKey.keySet()) {
      int d = editDistance(key, known, bestDistance);
      if (d < bestDistance) {
        best = known;
        bestDistance = d;
      }
    }
    return Optional.ofNullable(best);
  }

  private void scanModuleOf(Class<?> anchor) {
    CodeSource source = anchor.getProtectionDomain().getCodeSource();
    if (source == null) {
      return;
    }
    Path jar;
    try {
      jar = Path.of(source.getLocation().toURI());
    } catch (URISyntaxException | IllegalArgumentException e) {
      return;
    }
    if (!Files.isRegularFile(jar)) {
      return; // classes from a folder (an IDE build): nothing to list
    }
    try (JarFile jf = new JarFile(jar.toFile())) {
      for (JarEntry entry : Collections.list(jf.entries())) {
        String name = entry.getName();
        if (name.endsWith("Options.class") || name.endsWith("OptionsInternal.class")) {
          if (!name.contains("$") && !name.contains("/shaded/")) {
            addDeclaredOptions(
                name.substring(0, name.length() - ".class".length()).replace('/', '.'));
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list the Flink options in " + jar, e);
    }
  }

  private void addDeclaredOptions(String className) {
    Class<?> declaring;
    try {
      declaring = Class.forName(className, true, FlinkOptionCatalog.class.getClassLoader());
    } catch (ReflectiveOperationException | LinkageError e) {
      return; // needs a module this classpath does not have: its options cannot be used here either
    }
    for (Field f : declaring.getDeclaredFields()) {
      int m = f.getModifiers();
      if (!Modifier.isStatic(m)
          || !Modifier.isPublic(m)
          || !ConfigOption.class.isAssignableFrom(f.getType())) {
        continue;
      }
      ConfigOption<?> option;
      try {
        option = (ConfigOption<?>) f.get(null);
      } catch (IllegalAccessException e) {
        continue;
      }
      Documentation.SuffixOption suffix = f.getAnnotation(Documentation.SuffixOption.class);
      String key = suffix == null ? option.key() : suffix.value() + "." + option.key();
      if (key.contains("<")) {
        patterns.add(pattern(key));
        continue;
      }
      byKey.put(key, option);
      for (FallbackKey fallback : option.fallbackKeys()) {
        byKey.putIfAbsent(fallback.getKey(), option);
      }
    }
  }

  /**
   * {@code metrics.reporter.<name>.factory.class} -> any one segment in place of {@code <name>}.
   */
  private static Pattern pattern(String template) {
    StringBuilder re = new StringBuilder();
    for (String part : template.split("(?=<)|(?<=>)")) {
      re.append(part.startsWith("<") ? "[^.]+" : Pattern.quote(part));
    }
    return Pattern.compile(re.toString());
  }

  /** Levenshtein distance, or {@code limit} as soon as it is certain to reach it. */
  private static int editDistance(String a, String b, int limit) {
    if (Math.abs(a.length() - b.length()) >= limit) {
      return limit;
    }
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      int rowMin = current[0];
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        current[j] =
            Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
        rowMin = Math.min(rowMin, current[j]);
      }
      if (rowMin >= limit) {
        return limit;
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return Math.min(previous[b.length()], limit);
  }
}
