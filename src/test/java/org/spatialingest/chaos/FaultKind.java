package org.spatialingest.chaos;

import java.util.List;
import org.spatialingest.sink.core.SinkFaults;

/** The faults the chaos run injects; see src/site/markdown/chaos.md. */
enum FaultKind {
  /** {@code kill -9} of a TaskManager process, then a new TaskManager is started */
  TASKMANAGER_KILL,
  /** a writer fails right after writing a file because its memory budget was full */
  SINK_AFTER_MEMORY_FLUSH(SinkFaults.Point.AFTER_MEMORY_FLUSH),
  /** a writer fails right after writing a data file, before reporting it */
  SINK_AFTER_FILE_WRITTEN(SinkFaults.Point.AFTER_FILE_WRITTEN),
  /** a writer fails right after writing a barrier's staging runs */
  SINK_AFTER_STAGING(SinkFaults.Point.AFTER_STAGING),
  /** the committer fails with a completed checkpoint, before its Iceberg commit */
  SINK_BEFORE_COMMIT(SinkFaults.Point.BEFORE_COMMIT),
  /** the committer fails after the Iceberg commit, before Flink learns of it */
  SINK_AFTER_COMMIT(SinkFaults.Point.AFTER_COMMIT),
  /** a writer fails at end of input (a {@code stop --drain}), after closing its buffers */
  SINK_AT_END_OF_INPUT(SinkFaults.Point.AFTER_END_OF_INPUT),
  /** the Kafka broker is stopped, then started again */
  BROKER_RESTART,
  /** the Iceberg catalog (SQLite) is locked by another client for ~20 s */
  CATALOG_OUTAGE,
  /** another client appends rows to the same table, in several commits, while the job commits */
  CONCURRENT_WRITER,
  /** Iceberg's rewriteDataFiles compacts the table's recent files and commits mid-run */
  COMPACTION,
  /** stop with a savepoint, restore it at another parallelism */
  SAVEPOINT_RESCALE,
  /** cancel without savepoint, start again without state on the same consumer group */
  STATELESS_RESTART,
  /**
   * another instance of the job, with its own topic, consumer group and {@code sink.id}, writes the
   * same tables for the whole run (started before the first fault, stopped after the check); its
   * records are checked like the first job's. A sink fault may hit either job
   */
  SECOND_JOB,
  /**
   * point records start to carry a property the table has no column for ({@code battery_pct}); the
   * run is then under {@code input.typed-properties: auto}, and the column must arrive
   */
  PROPERTY_APPEARS;

  /**
   * the short variant inside {@code mvn verify}: one of each kind of part (process, sink, broker,
   * table, state)
   */
  static final List<FaultKind> SHORT =
      List.of(
          TASKMANAGER_KILL,
          SINK_AFTER_COMMIT,
          BROKER_RESTART,
          CONCURRENT_WRITER,
          COMPACTION,
          SAVEPOINT_RESCALE);

  /** the sink step for the sink faults, else null */
  final SinkFaults.Point sinkPoint;

  FaultKind() {
    this(null);
  }

  FaultKind(SinkFaults.Point sinkPoint) {
    this.sinkPoint = sinkPoint;
  }
}
