package org.spatialingest.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a job configuration: a YAML file (nested or flat dotted keys, both allowed) flattened to
 * dotted keys, then {@code key=value} overrides applied in order, then validated into a {@link
 * JobConfig}.
 */
public final class ConfigLoader {
  private ConfigLoader() {}

  public static JobConfig load(Path yaml, List<String> overrides) {
    Map<String, String> flat = new LinkedHashMap<>();
    if (yaml != null) {
      flat.putAll(readYaml(yaml));
    }
    flat.putAll(parseOverrides(overrides));
    return JobConfig.fromMap(flat);
  }

  public static Map<String, String> readYaml(Path yaml) {
    if (!Files.isRegularFile(yaml)) {
      throw new ConfigException("config file " + yaml + " does not exist or is not a file");
    }
    try {
      JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(yaml.toFile());
      Map<String, String> flat = new LinkedHashMap<>();
      if (root != null && !root.isNull() && !root.isMissingNode()) {
        if (!root.isObject()) {
          throw new ConfigException(
              "config file " + yaml + " must hold a mapping of keys to values");
        }
        flatten("", root, flat);
      }
      return flat;
    } catch (IOException e) {
      // the parser quotes the offending line, which may hold a credential
      throw new ConfigException(
          "config file " + yaml + " is not valid YAML: " + Secrets.scrub(e.getMessage()));
    }
  }

  public static Map<String, String> parseOverrides(List<String> overrides) {
    Map<String, String> flat = new LinkedHashMap<>();
    if (overrides == null) {
      return flat;
    }
    for (String override : overrides) {
      int eq = override.indexOf('=');
      if (eq <= 0) {
        throw new ConfigException(
            "override '"
                + Secrets.scrub(override)
                + "' must look like key=value, e.g. sink.max-latency=60s");
      }
      flat.put(override.substring(0, eq).trim(), override.substring(eq + 1).trim());
    }
    return flat;
  }

  private static void flatten(String prefix, JsonNode node, Map<String, String> out) {
    if (node.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        flatten(
            prefix.isEmpty() ? field.getKey() : prefix + "." + field.getKey(),
            field.getValue(),
            out);
      }
    } else if (node.isArray()) {
      throw new ConfigException(
          "key '" + prefix + "' holds a list; only scalar values are allowed");
    } else if (!node.isNull()) {
      out.put(prefix, node.asText());
    }
  }
}
