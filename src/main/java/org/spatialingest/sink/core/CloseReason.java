package org.spatialingest.sink.core;

import java.util.Locale;
import org.apache.flink.annotation.Internal;

/**
 * Why a writer closed a data file. The lower-case name is the metric suffix and the
 * snapshot-summary key.
 */
@Internal
public enum CloseReason {
  /** buffered rows would encode to about the target file size T */
  BYTES,
  /** the oldest buffered row would exceed the freshness bound L at the next checkpoint */
  LATENCY,
  /** the writer's in-flight bytes reached the memory budget M between barriers */
  MEMORY,
  /** the input ended (bounded run) */
  END_OF_INPUT,
  /** more partitions were open than allowed; the least recently written one was closed */
  PARTITION_LIMIT,
  /** the every-checkpoint policy closes all files at every barrier */
  CHECKPOINT;

  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
