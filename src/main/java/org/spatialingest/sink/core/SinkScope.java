package org.spatialingest.sink.core;

import java.io.Serializable;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;

/**
 * Which files in a table are one sink's own: its operator uid prefix ({@code spatial-sink}, kept
 * stable so savepoints restore) and its sink id ({@code sink.id}), which sets several jobs writing
 * one table apart. Staging runs, data file names, the liveness lease and every clean-up are scoped
 * by both ({@link SinkFileNames}).
 *
 * @param uid the sink's uid prefix
 * @param sinkId letters, digits, {@code .}, {@code _}, {@code -}
 * @param claimsUnscoped whether this sink also owns the staging runs and data files that builds
 *     before sink ids wrote (without an id in their path or name): true for the sink whose id is
 *     the default one (from {@code kafka.group-id}), the one an upgraded single-job deployment runs
 */
@Internal
public record SinkScope(String uid, String sinkId, boolean claimsUnscoped) implements Serializable {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

  public SinkScope {
    if (uid == null || uid.isEmpty() || uid.contains("/")) {
      throw new IllegalArgumentException("sink uid must be a non-empty name, was " + uid);
    }
    if (sinkId == null || !ID.matcher(sinkId).matches()) {
      throw new IllegalArgumentException(
          "sink id must be letters, digits, '.', '_', '-' (at most 64), was " + sinkId);
    }
  }
}
