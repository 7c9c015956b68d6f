package org.spatialingest.sink;

import java.util.function.Consumer;

/**
 * Named points in the sink where the exactly-once tests inject failures. Reached only per file flush and per
 * commit, never per record; does nothing unless a test installs a hook.
 */
final class SinkFaults {
  enum Point {
    /** a writer just wrote a file because its memory budget was full, before the next checkpoint */
    AFTER_MEMORY_FLUSH,
    /** a writer wrote a data file (any close reason), before it is reported downstream */
    AFTER_FILE_WRITTEN,
    /** a writer wrote this barrier's staging runs, before the checkpoint completes */
    AFTER_STAGING,
    /** a writer saw the end of its input and closed its buffers */
    AFTER_END_OF_INPUT,
    /** the checkpoint completed; the committer is about to commit its batch */
    BEFORE_COMMIT,
    /** the Iceberg commit succeeded; Flink has not been told yet */
    AFTER_COMMIT
  }

  private static volatile Consumer<Point> hook = point -> {};

  private SinkFaults() {}

  static void install(Consumer<Point> newHook) {
    hook = newHook == null ? point -> {} : newHook;
  }

  static void reach(Point point) {
    hook.accept(point);
  }
}
