package org.spatialingest.sink.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.apache.flink.annotation.Internal;

/**
 * Named points in the sink where the exactly-once tests inject failures. Reached only per file
 * flush and per commit, never per record; does nothing unless a test installs a hook, or the JVM
 * was started with {@value #TRIGGER_DIR_PROPERTY} (how a test reaches a TaskManager process it
 * cannot install a hook in).
 */
@Internal
public final class SinkFaults {
  /**
   * System property naming a directory: a file there named after a {@link Point} makes the next JVM
   * (of all that share the directory) reaching that point fail once; it deletes the file first, so
   * exactly one fails.
   */
  public static final String TRIGGER_DIR_PROPERTY = "spatialingest.sink-faults.dir";

  public enum Point {
    /** a writer just wrote a file because its memory budget was full, before the next checkpoint */
    AFTER_MEMORY_FLUSH,
    /**
     * a writer added property columns to the table ({@code input.typed-properties: auto}), before
     * writing the file that needs them
     */
    AFTER_SCHEMA_CHANGE,
    /** a writer wrote a data file (any close reason), before it is reported downstream */
    AFTER_FILE_WRITTEN,
    /** a writer wrote this barrier's staging runs, before the checkpoint completes */
    AFTER_STAGING,
    /** a writer parked a buffer: its rows are in staging runs, its memory released */
    AFTER_PARKING,
    /** a writer restored a state that holds parked buffers (once per restore) */
    RESTORED_PARKED,
    /** a writer saw the end of its input and closed its buffers */
    AFTER_END_OF_INPUT,
    /**
     * the committer wrote a batch's manifest for a table ({@code commit.BatchManifests}), before
     * the commit that appends it
     */
    AFTER_BATCH_MANIFEST,
    /** the checkpoint completed; the committer is about to commit its batch */
    BEFORE_COMMIT,
    /**
     * the committer added the batch to the primary table's transaction (once per attempt), before
     * the transaction commits
     */
    IN_COMMIT_TRANSACTION,
    /** the Iceberg commit succeeded; Flink has not been told yet */
    AFTER_COMMIT,
    /**
     * the first checkpoint since a restore completed; the aggregator is about to remove what the
     * failure left behind
     */
    BEFORE_ORPHAN_CLEANUP
  }

  private static volatile Consumer<Point> hook =
      fromTriggerDir(System.getProperty(TRIGGER_DIR_PROPERTY));

  private SinkFaults() {}

  public static void install(Consumer<Point> newHook) {
    hook = newHook == null ? point -> {} : newHook;
  }

  public static void reach(Point point) {
    hook.accept(point);
  }

  static Consumer<Point> fromTriggerDir(String dir) {
    if (dir == null || dir.isBlank()) {
      return point -> {};
    }
    Path root = Path.of(dir);
    return point -> {
      boolean armed;
      try {
        armed = Files.deleteIfExists(root.resolve(point.name()));
      } catch (IOException e) {
        armed = false; // the trigger directory is the test's; never fail the job because of it
      }
      if (armed) {
        throw new IllegalStateException(
            "injected sink fault at " + point + " (trigger file in " + root + ")");
      }
    };
  }
}
