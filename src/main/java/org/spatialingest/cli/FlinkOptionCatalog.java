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
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;

/**
 * The Flink options a local run can be given: every public static {@link ConfigOption} declared by a class named
 * {@code *Options} or {@code *OptionsInternal} in the Flink modules of the local cluster (flink-core, flink-runtime,
 * flink-clients; found through one class of each, so the list is Flink's own and never copied here). Fallback and
 * deprecated keys count as known; keys with a {@code <name>} part (metrics reporters, ...) are matched as patterns.
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

  /** True when Flink declares the key, or it fits a declared {@code <name>} pattern. */
  boolean isKnown(String key) {
    return byKey.containsKey(key) || patterns.stream().anyMatch(p -> p.matcher(key).matches());
  }

  /** The typed option declared for the key (absent for pattern keys and unknown keys). */
  Optional<ConfigOption<?>> option(String key) {
    return Optional.ofNullable(byKey.get(key));
  }

  /** The known key closest to {@code key} (edit distance at most 3), for a "did you mean" hint. */
  Optional<String> closest(String key) {
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

  int size() {
    return byKey.size();
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
            addDeclaredOptions(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
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
      if (!Modifier.isStatic(m) || !Modifier.isPublic(m) || !ConfigOption.class.isAssignableFrom(f.getType())) {
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

  /** {@code metrics.reporter.<name>.factory.class} -> any one segment in place of {@code <name>}. */
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
        current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
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
