package org.spatialingest.deploy;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import org.apache.flink.annotation.docs.Documentation;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.FallbackKey;

/**
 * Every {@link ConfigOption} that the Flink jars on the test classpath declare: public static
 * fields of type ConfigOption in classes named {@code *Options} (plus {@code *OptionsInternal})
 * inside the cluster-side Flink modules (core, runtime, streaming, clients, web, state backends,
 * rpc, kubernetes). Table, connector and test-utility jars are skipped: their options are
 * per-table/per-source, not cluster keys. Fallback keys and deprecated keys are included - as the
 * 2.1 classes still declare them - and remembered as deprecated. Options declared with {@link
 * Documentation.SuffixOption} (e.g. {@code metrics.reporter.<name>.factory.class}) become patterns;
 * the catch-all {@code metrics.reporter.<name>.<parameter>} is left out on purpose so
 * reporter-specific keys must be allow-listed by the test.
 */
final class FlinkOptionsCatalog {

  private static final Pattern SCANNED_JARS =
      Pattern.compile(
          "flink-(core|runtime|runtime-web|streaming-java|clients|statebackend-[a-z-]+|dstl-dfs|rpc-[a-z-]+|kubernetes|metrics-core)-\\d.*\\.jar");

  final Map<String, ConfigOption<?>> options =
      new TreeMap<>(); // key (incl. fallback keys) -> option
  final Set<String> deprecatedKeys = new HashSet<>();
  final List<Pattern> patterns = new ArrayList<>();
  final Set<String> scannedClasses = new HashSet<>();
  final Map<String, String> unloadableClasses = new TreeMap<>();

  static FlinkOptionsCatalog fromClasspath() {
    FlinkOptionsCatalog c = new FlinkOptionsCatalog();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = new File(entry).getName();
      if (SCANNED_JARS.matcher(name).matches()) {
        c.scanJar(entry);
      }
    }
    return c;
  }

  boolean isKnown(String key) {
    return options.containsKey(key) || patterns.stream().anyMatch(p -> p.matcher(key).matches());
  }

  private void scanJar(String jar) {
    try (JarFile jf = new JarFile(jar)) {
      for (JarEntry je : Collections.list(jf.entries())) {
        String n = je.getName();
        if (!n.endsWith(".class") || n.contains("$") || n.contains("/shaded/")) continue;
        String simple = n.substring(n.lastIndexOf('/') + 1, n.length() - ".class".length());
        if (!simple.endsWith("Options") && !simple.endsWith("OptionsInternal")) continue;
        String className = n.substring(0, n.length() - ".class".length()).replace('/', '.');
        Class<?> k;
        try {
          k = Class.forName(className, true, FlinkOptionsCatalog.class.getClassLoader());
        } catch (Throwable t) {
          unloadableClasses.put(className, t.toString());
          continue;
        }
        scannedClasses.add(simple);
        addOptions(k);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(jar, e);
    }
  }

  private void addOptions(Class<?> k) {
    for (Field f : k.getDeclaredFields()) {
      if (!Modifier.isStatic(f.getModifiers()) || !ConfigOption.class.isAssignableFrom(f.getType()))
        continue;
      ConfigOption<?> o;
      try {
        f.setAccessible(true);
        o = (ConfigOption<?>) f.get(null);
      } catch (ReflectiveOperationException | RuntimeException e) {
        continue;
      }
      if (o == null) continue;
      Documentation.SuffixOption suffix = f.getAnnotation(Documentation.SuffixOption.class);
      if (suffix != null) {
        if (!o.key().contains("<")) {
          patterns.add(toPattern(suffix.value() + "." + o.key()));
        }
        continue;
      }
      if (o.key().contains("<")) {
        patterns.add(toPattern(o.key()));
        continue;
      }
      options.put(o.key(), o);
      if (f.isAnnotationPresent(Deprecated.class)) deprecatedKeys.add(o.key());
      for (FallbackKey fk : o.fallbackKeys()) {
        options.putIfAbsent(fk.getKey(), o);
        if (fk.isDeprecated()) deprecatedKeys.add(fk.getKey());
      }
    }
  }

  private static Pattern toPattern(String template) {
    StringBuilder re = new StringBuilder();
    for (String part : template.split("(?=<)|(?<=>)")) {
      re.append(part.startsWith("<") ? "[^.]+" : Pattern.quote(part));
    }
    return Pattern.compile(re.toString());
  }

  Map<String, String> describe() {
    Map<String, String> m = new HashMap<>();
    m.put("options", String.valueOf(options.size()));
    m.put("patterns", String.valueOf(patterns.size()));
    m.put("unloadable", unloadableClasses.keySet().toString());
    return m;
  }
}
