package org.spatialingest.sink.options;

import org.apache.flink.annotation.PublicEvolving;

/**
 * How rows reach the sink's writers. A minor version may add a mode; it does not change what a mode
 * does to the files a table gets.
 */
@PublicEvolving
public enum DistributionMode {
  /** Each writer takes what its upstream subtask sends: no exchange. */
  NONE,
  /** By time partition: one writer per partition. */
  HASH,
  /**
   * By time partition and Hilbert-key ranges sized by bytes, as many ranges as the bytes per L fill
   * files of T, so files follow bytes / T, not the writer count, and each covers a compact area.
   */
  RANGE
}
