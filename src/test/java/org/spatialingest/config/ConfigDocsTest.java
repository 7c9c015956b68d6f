package org.spatialingest.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Each job key is declared once, in {@link JobOptions}; README's configuration table is checked
 * against the declarations: one row a key ({@code | `key` | `default` | description |}), the same
 * keys, defaults and descriptions.
 */
class ConfigDocsTest {
  private static final Pattern ROW =
      Pattern.compile("\\| `([^`]+)` \\| (?:`([^`]*)`)? ?\\| (.*?) ?\\|");

  @Test
  void readmeTableHasOneRowPerDeclaredKeyWithItsDefaultAndDescription() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String section =
        readme.substring(readme.indexOf("## Configuration"), readme.indexOf("## How it works"));
    Map<String, String> documented = new LinkedHashMap<>();
    for (String line : section.split("\n")) {
      if (!line.startsWith("| `")) {
        continue;
      }
      Matcher m = ROW.matcher(line);
      assertThat(m.matches()).as("a row | `key` | `default` | description |: %s", line).isTrue();
      String previous =
          documented.put(m.group(1), row(m.group(2) == null ? "" : m.group(2), m.group(3)));
      assertThat(previous).as("%s documented twice", m.group(1)).isNull();
    }
    Map<String, String> declared = new LinkedHashMap<>();
    for (JobOption<?> option : JobOptions.ALL) {
      declared.put(option.key(), row(option.defaultValue(), option.description()));
    }
    assertThat(documented.keySet()).containsExactlyInAnyOrderElementsOf(declared.keySet());
    assertThat(documented).isEqualTo(declared);
  }

  @Test
  void everyDefaultIsValid() {
    JobConfig defaults = JobConfig.defaults();
    for (JobOption<?> option : JobOptions.ALL) {
      if (!option.key().endsWith(".*")) {
        assertThat(JobConfig.fromMap(Map.of(option.key(), option.defaultValue())))
            .as(option.key())
            .isEqualTo(defaults);
      }
    }
  }

  private static String row(String defaultValue, String description) {
    return "default `" + defaultValue + "`, " + description;
  }
}
