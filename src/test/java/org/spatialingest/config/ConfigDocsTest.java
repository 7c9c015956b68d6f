package org.spatialingest.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Each job key is declared once, in {@link JobConfig#KEYS}; README's configuration table is checked against it: the
 * same keys, the same defaults.
 */
class ConfigDocsTest {
  private static final Pattern TICKED = Pattern.compile("`([^`]*)`");

  @Test
  void readmeTableListsEveryKeyWithItsDefault() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String section = readme.substring(readme.indexOf("## Configuration"), readme.indexOf("## How it works"));
    Map<String, String> documented = new LinkedHashMap<>();
    for (String line : section.split("\n")) {
      if (!line.startsWith("| `")) {
        continue;
      }
      String[] cells = line.split("\\|");
      List<String> keys = ticked(cells[1]);
      List<String> defaults = ticked(cells[2]);
      String first = keys.get(0);
      for (int i = 0; i < keys.size(); i++) {
        String key = keys.get(i).startsWith(".") ? first.substring(0, first.indexOf('.')) + keys.get(i) : keys.get(i);
        String def = defaults.isEmpty() ? "" : defaults.get(Math.min(i, defaults.size() - 1));
        documented.put(key, def);
      }
    }
    Map<String, String> declared = new LinkedHashMap<>();
    JobConfig.KEYS.forEach((key, spec) -> declared.put(key, spec.substring(0, spec.indexOf('|'))));
    assertThat(documented.keySet()).containsExactlyInAnyOrderElementsOf(declared.keySet());
    assertThat(documented).isEqualTo(declared);
  }

  private static List<String> ticked(String cell) {
    List<String> out = new ArrayList<>();
    Matcher m = TICKED.matcher(cell);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }
}
