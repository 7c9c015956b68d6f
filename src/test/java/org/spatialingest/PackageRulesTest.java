package org.spatialingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layering README "How it works" states: each package imports only the packages below it, so
 * there is no cycle. Read from the sources' import lines ({@code root} is {@code org.spatialingest}
 * itself). The sink's options ({@code sink.options}) sit below the configuration: every room of the
 * sink and every package that may read the configuration may name them.
 */
class PackageRulesTest {
  /** package → the packages it may import (besides itself) */
  private static final Map<String, Set<String>> ALLOWED =
      Map.ofEntries(
          Map.entry(
              "cli",
              Set.of(
                  "local",
                  "root",
                  "tools",
                  "geometry",
                  "source",
                  "sink",
                  "deadletter",
                  "table",
                  "config",
                  "sizing")),
          Map.entry(
              "local",
              Set.of(
                  "root",
                  "tools",
                  "geometry",
                  "source",
                  "sink",
                  "deadletter",
                  "table",
                  "config",
                  "sizing")),
          Map.entry(
              "root",
              Set.of(
                  "tools",
                  "geometry",
                  "source",
                  "sink",
                  "deadletter",
                  "table",
                  "config",
                  "sizing")),
          Map.entry("deadletter", Set.of("table", "config", "sizing")),
          Map.entry("tools", Set.of("geometry", "source", "sink", "table", "config", "sizing")),
          Map.entry("geometry", Set.of("source", "sink", "table", "config", "sizing")),
          Map.entry("source", Set.of("table", "config", "sizing")),
          // the sink's rooms: its public surface on top (the builder assembles distribution,
          // writers and commit), then the distribution (the exchange in front of the writers,
          // sized as the writers buffer), commit (over recovery), and write; write and commit never
          // import each other; compat (readers of retired state formats, converting into today's
          // types) sits under the rooms whose state readers call it; core is what they all share
          Map.entry(
              "sink",
              Set.of(
                  "sink.distribution",
                  "sink.write",
                  "sink.commit",
                  "sink.recovery",
                  "sink.compat",
                  "sink.core",
                  "table",
                  "sizing")),
          Map.entry("sink.distribution", Set.of("sink.write", "sink.core", "table", "sizing")),
          Map.entry(
              "sink.commit",
              Set.of("sink.recovery", "sink.compat", "sink.core", "table", "sizing")),
          Map.entry("sink.recovery", Set.of("sink.core", "table", "sizing")),
          Map.entry("sink.write", Set.of("sink.compat", "sink.core", "table", "sizing")),
          Map.entry("sink.compat", Set.of("sink.core", "table", "sizing")),
          Map.entry("sink.core", Set.of("table", "sizing")),
          // the sink's options (its enums, keys and defaults) import nothing of ours: every room of
          // the sink names them, and the application maps its configuration onto them; no room of
          // the sink imports the application's configuration
          Map.entry("sink.options", Set.of()),
          Map.entry("table", Set.of("config", "sizing")),
          Map.entry("config", Set.of("sink.options", "sizing")),
          Map.entry("sizing", Set.of()));

  /** the package part of an import: lower-case segments up to the first class name */
  private static final Pattern IMPORT =
      Pattern.compile(
          "^import (?:static )?org\\.spatialingest\\.((?:[a-z]\\w*\\.)*)[A-Z]", Pattern.MULTILINE);

  @Test
  void everyPackageImportsOnlyPackagesBelowIt() throws IOException {
    Path main = Path.of("src/main/java/org/spatialingest");
    List<String> violations = new ArrayList<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Path parent = main.relativize(file.getParent());
        String pkg = parent.toString().isEmpty() ? "root" : parent.toString().replace('/', '.');
        assertThat(ALLOWED).as("package %s has a rule", pkg).containsKey(pkg);
        Matcher m = IMPORT.matcher(Files.readString(file));
        while (m.find()) {
          String target =
              m.group(1).isEmpty() ? "root" : m.group(1).substring(0, m.group(1).length() - 1);
          if (target.startsWith("sink.")
              && !target.equals("sink.options")
              && !pkg.startsWith("sink")) {
            target = "sink"; // outside the sink, its rooms count as one package
          }
          boolean options =
              target.equals("sink.options")
                  && (pkg.startsWith("sink") || ALLOWED.get(pkg).contains("config"));
          if (!target.equals(pkg) && !options && !ALLOWED.get(pkg).contains(target)) {
            violations.add(main.relativize(file) + " imports " + target);
          }
        }
      }
    }
    assertThat(violations).isEmpty();
  }
}
