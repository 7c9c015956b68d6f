package org.spatialingest.sink.options;

import org.apache.flink.annotation.PublicEvolving;

/** When the sink closes its files. */
@PublicEvolving
public enum ClosePolicyKind {
  /**
   * Whichever binds first of the memory budget M, the target file bytes T and the freshness bound
   * L, at a checkpoint: files near T, data never older than L + C.
   */
  BOUNDED,
  /** Every file at every checkpoint barrier (what Iceberg's own sink does; for comparison). */
  EVERY_CHECKPOINT
}
