package org.spatialingest.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A deliberately small stand-in for {@code kustomize build} (no kubectl/kustomize binary on the
 * build machines). It supports exactly the kustomization features this repository uses and fails on
 * anything else, so a new feature cannot be silently ignored:
 *
 * <ul>
 *   <li>{@code resources}: files (one or more YAML documents) and directories with a
 *       kustomization.yaml;
 *   <li>{@code namespace}: set on every object, and on ServiceAccount subjects of RoleBindings;
 *   <li>{@code patches} with {@code path}: a patch object that names its target by
 *       apiVersion/kind/metadata.name, applied with merge semantics (maps merged recursively, lists
 *       replaced, {@code null} deletes). That is what kustomize does for custom resources such as
 *       FlinkDeployment (no strategic-merge metadata for CRDs); for built-in kinds kustomize would
 *       merge some lists by key, which no patch here relies on;
 *   <li>{@code patches} with {@code target} + inline {@code patch}: JSON 6902 operations
 *       add/replace/remove.
 * </ul>
 */
final class KustomizeLite {

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> SUPPORTED_KEYS =
      Set.of("apiVersion", "kind", "resources", "patches", "namespace");

  private KustomizeLite() {}

  /** Renders the kustomization in {@code dir}; returns the objects in resource order. */
  static List<ObjectNode> build(Path dir) {
    JsonNode k = readSingle(dir.resolve("kustomization.yaml"));
    for (Iterator<String> it = k.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!SUPPORTED_KEYS.contains(key)) {
        throw new IllegalStateException(
            dir
                + "/kustomization.yaml uses '"
                + key
                + "', which KustomizeLite does not implement; extend it (and its tests) first");
      }
    }
    List<ObjectNode> objects = new ArrayList<>();
    for (JsonNode r : k.path("resources")) {
      Path p = dir.resolve(r.asText()).normalize();
      if (Files.isDirectory(p)) {
        objects.addAll(build(p));
      } else {
        objects.addAll(readAll(p));
      }
    }
    for (JsonNode patch : k.path("patches")) {
      if (patch.has("path")) {
        for (ObjectNode doc : readAll(dir.resolve(patch.get("path").asText()))) {
          ObjectNode target =
              find(
                  objects,
                  doc.path("kind").asText(),
                  doc.path("metadata").path("name").asText(),
                  dir);
          if (!doc.path("apiVersion").asText().equals(target.path("apiVersion").asText())) {
            throw new IllegalStateException(
                "patch " + patch + " apiVersion differs from its target");
          }
          mergeInto(target, doc);
        }
      } else if (patch.has("patch") && patch.has("target")) {
        ObjectNode target =
            find(
                objects,
                patch.get("target").path("kind").asText(),
                patch.get("target").path("name").asText(),
                dir);
        JsonNode ops = parse(patch.get("patch").asText());
        if (!ops.isArray()) {
          throw new IllegalStateException(
              "inline strategic-merge patches are not supported: " + patch);
        }
        for (JsonNode op : ops) {
          applyJson6902(target, op);
        }
      } else {
        throw new IllegalStateException("unsupported patch entry in " + dir + ": " + patch);
      }
    }
    if (k.has("namespace")) {
      String ns = k.get("namespace").asText();
      for (ObjectNode o : objects) {
        ((ObjectNode) o.with("metadata")).put("namespace", ns);
        if ("RoleBinding".equals(o.path("kind").asText())) {
          for (JsonNode s : o.path("subjects")) {
            if ("ServiceAccount".equals(s.path("kind").asText())) {
              ((ObjectNode) s).put("namespace", ns);
            }
          }
        }
      }
    }
    return objects;
  }

  static List<ObjectNode> readAll(Path file) {
    try (YAMLParser parser = (YAMLParser) YAML.getFactory().createParser(file.toFile())) {
      List<ObjectNode> docs = new ArrayList<>();
      for (Iterator<JsonNode> it = YAML.readValues(parser, JsonNode.class); it.hasNext(); ) {
        JsonNode n = it.next();
        if (n != null && !n.isNull() && !n.isMissingNode()) {
          docs.add((ObjectNode) n);
        }
      }
      return docs;
    } catch (IOException e) {
      throw new UncheckedIOException(file.toString(), e);
    }
  }

  static JsonNode readSingle(Path file) {
    List<ObjectNode> docs = readAll(file);
    if (docs.size() != 1) {
      throw new IllegalStateException(file + ": expected one YAML document, got " + docs.size());
    }
    return docs.get(0);
  }

  static JsonNode parse(String yaml) {
    try {
      return YAML.readTree(yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static ObjectNode find(List<ObjectNode> objects, String kind, String name, Path dir) {
    return objects.stream()
        .filter(
            o ->
                kind.equals(o.path("kind").asText())
                    && name.equals(o.path("metadata").path("name").asText()))
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    dir + ": no resource " + kind + "/" + name + " to patch"));
  }

  /**
   * Merge-patch semantics: objects merged recursively, everything else (lists, scalars) replaced,
   * null deletes.
   */
  static void mergeInto(ObjectNode target, JsonNode patch) {
    for (Iterator<String> it = patch.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      JsonNode v = patch.get(f);
      if (v.isNull()) {
        target.remove(f);
      } else if (v.isObject() && target.get(f) != null && target.get(f).isObject()) {
        mergeInto((ObjectNode) target.get(f), v);
      } else {
        target.set(f, v.deepCopy());
      }
    }
  }

  private static void applyJson6902(ObjectNode root, JsonNode op) {
    String path = op.path("path").asText();
    if (!path.startsWith("/")) {
      throw new IllegalStateException("bad JSON patch path " + path);
    }
    String[] parts = path.substring(1).split("/");
    JsonNode parent = root;
    for (int i = 0; i < parts.length - 1; i++) {
      parent = child(parent, unescape(parts[i]));
      if (parent == null) {
        throw new IllegalStateException("JSON patch path not found: " + path);
      }
    }
    String last = unescape(parts[parts.length - 1]);
    switch (op.path("op").asText()) {
      case "remove" -> {
        if (child(parent, last) == null) {
          throw new IllegalStateException("JSON patch remove: no " + path);
        }
        if (parent.isObject()) ((ObjectNode) parent).remove(last);
        else ((ArrayNode) parent).remove(Integer.parseInt(last));
      }
      case "add", "replace" -> {
        JsonNode value = op.get("value").deepCopy();
        if (parent.isObject()) {
          if ("replace".equals(op.path("op").asText()) && !parent.has(last)) {
            throw new IllegalStateException("JSON patch replace: no " + path);
          }
          ((ObjectNode) parent).set(last, value);
        } else if ("-".equals(last)) {
          ((ArrayNode) parent).add(value);
        } else if ("add".equals(op.path("op").asText())) {
          ((ArrayNode) parent).insert(Integer.parseInt(last), value);
        } else {
          ((ArrayNode) parent).set(Integer.parseInt(last), value);
        }
      }
      default -> throw new IllegalStateException("unsupported JSON patch op " + op);
    }
  }

  private static JsonNode child(JsonNode parent, String token) {
    if (parent.isArray()) {
      return parent.get(Integer.parseInt(token));
    }
    return parent.get(token);
  }

  private static String unescape(String token) {
    return token.replace("~1", "/").replace("~0", "~");
  }
}
