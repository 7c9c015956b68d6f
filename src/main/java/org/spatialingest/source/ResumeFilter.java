package org.spatialingest.source;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.CommittedRecords;
import org.spatialingest.table.FileInputs;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.LibraryThreads;
import org.spatialingest.table.PositionRanges;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.TablePositions;

/**
 * Right after the source: on a start without state, drops the records the tables already hold
 * (below the recorded positions, or committed above them: {@link CommittedRecords}), so a restart
 * without state, or a re-run of the same files, neither loses nor duplicates a row. A record of a
 * source the table has no position for always passes.
 *
 * <p>What it skips is fixed at that start: the tables' snapshots then. Its state is those snapshot
 * ids, written by every subtask {@value #COPIES_PER_SUBTASK} times, so that a restore at up to that
 * many times the parallelism still gives every subtask a copy (split list state is redistributed
 * round robin); each recomputes the same set as of that snapshot. (Union list state would say it
 * more simply, but Flink cannot checkpoint union state once some subtasks of a bounded source have
 * finished.) With no position in the table there is no state at all.
 *
 * <p>Cost per record: one hash lookup by source key (the same string instance per partition or
 * file); for a file, then a binary search over its committed line ranges (one for a whole file).
 *
 * <p>With {@code source.skip-committed: false} ({@link #sourceIdsOnly}) it skips nothing but still
 * keeps the Kafka ids of the offsets and refuses a restore of another topic or cluster:
 * re-appending on a start without state is what the user asked for; restoring offsets of a topic
 * since created again is not.
 */
@PublicEvolving
public final class ResumeFilter extends ProcessFunction<SourceRecord, SourceRecord>
    implements CheckpointedFunction {
  private static final Logger LOG = LoggerFactory.getLogger(ResumeFilter.class);
  static final int COPIES_PER_SUBTASK = 4;

  /**
   * Accumulator of the records skipped as already committed (the bounded run's summary reads it).
   */
  public static final String SKIPPED_ACCUMULATOR = "skippedCommitted";

  private final TableLoader telemetry;
  private final TableLoader rejects;
  private final String sinkId;
  private final KafkaIds ids;

  /** per file source key, the keys of earlier paths of that file ({@link FileStartCheck}) */
  private final Map<String, List<String>> fileAliases;

  /** a start without state's telemetry and rejects snapshots (-1: none) */
  private final long[] resumeAt;

  /**
   * what the tables hold at {@link #resumeAt}, read where the job was built; null: read here (and
   * always at a restore, from the snapshots the state names)
   */
  private final CommittedRecords atStart;

  private transient CommittedRecords committed;

  /** the telemetry table's snapshot the skip was fixed at, or -1 for none */
  private transient long resumeSnapshot = -1;

  /** the rejects table's snapshot at the same start, or -1 */
  private transient long rejectsSnapshot = -1;

  /** entries {@code <telemetry snapshot>/<rejects snapshot>} */
  private transient ListState<String> state;

  /**
   * entries: the Kafka ids ({@link KafkaIds#encode}) the source's offsets in the same checkpoint
   * are of, {@value #COPIES_PER_SUBTASK} per subtask like {@link #state}
   */
  private transient ListState<String> sourceIds;

  private transient Counter skipped;
  private transient LongCounter skippedTotal;

  /**
   * @param rejects the rejects table, or null for a job that has none
   * @param sinkId whose positions count ({@code sink.id})
   * @param ids the Kafka the job reads: positions of another cluster, or of a topic since created
   *     again, skip nothing ({@link CommittedRecords#read})
   * @param fileAliases per file source key, the source keys of the paths the file had before (it
   *     moved): their committed lines are its committed lines
   * @param resumeAt on a start without state, the telemetry and rejects tables' snapshots the skip
   *     is fixed at ({@link org.spatialingest.table.ResumeTags#pin}, where the job is built; -1:
   *     none); a restore reads them from its state
   */
  public ResumeFilter(
      TableLoader telemetry,
      TableLoader rejects,
      String sinkId,
      KafkaIds ids,
      Map<String, List<String>> fileAliases,
      long[] resumeAt) {
    this(telemetry, rejects, sinkId, ids, fileAliases, resumeAt, null);
  }

  /**
   * The same, given what the tables hold at {@code resumeAt} ({@link CommittedRecords#read}, where
   * the job is built: a file source's start reads it there once); a start without state uses it
   * instead of reading the tables in every subtask, a restore reads the snapshots its state names.
   *
   * @param atStart null: read it in every subtask
   */
  public ResumeFilter(
      TableLoader telemetry,
      TableLoader rejects,
      String sinkId,
      KafkaIds ids,
      Map<String, List<String>> fileAliases,
      long[] resumeAt,
      CommittedRecords atStart) {
    this.telemetry = telemetry;
    this.rejects = rejects;
    this.sinkId = sinkId;
    this.ids = ids;
    this.fileAliases = Map.copyOf(fileAliases);
    this.resumeAt = resumeAt.clone();
    this.atStart = atStart;
  }

  /**
   * For {@code source.skip-committed: false}: skips nothing, keeps the Kafka ids the checkpoint's
   * offsets are of and refuses a restore onto another topic or cluster, as with skipping.
   */
  public static ResumeFilter sourceIdsOnly(KafkaIds ids) {
    return new ResumeFilter(null, null, null, ids, Map.of(), new long[] {-1, -1});
  }

  /** The file aliases of a file source's start: per file key, its earlier paths' keys. */
  public static Map<String, List<String>> aliasesOf(FileInputs files) {
    Map<String, List<String>> aliases = new HashMap<>();
    files
        .files()
        .values()
        .forEach(
            f -> {
              if (!f.aliases().isEmpty()) {
                aliases.put(SourceKeys.file(f.path()), f.aliases());
              }
            });
    return aliases;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    LibraryThreads.stopOnRelease(getRuntimeContext());
    state =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("resume-snapshots", Types.STRING));
    sourceIds =
        context
            .getOperatorStateStore()
            .getListState(new ListStateDescriptor<>("source-ids", Types.STRING));
    boolean stateNamesItsSource = false;
    if (context.isRestored()) {
      for (String restored : sourceIds.get()) {
        refuseAnotherSource(KafkaIds.decode(restored));
        stateNamesItsSource = true;
        break; // every entry is the same
      }
    }
    committed = CommittedRecords.none();
    if (telemetry == null) {
      return; // sourceIdsOnly
    }
    if (!context.isRestored() && atStart != null) {
      resumeSnapshot = resumeAt[0];
      rejectsSnapshot = rejects == null ? -1 : resumeAt[1];
      committed = atStart;
      logStart();
      return;
    }
    try (TableLoader t = telemetry.clone();
        TableLoader r = rejects == null ? null : rejects.clone()) {
      t.open();
      Table table = t.loadTable();
      if (context.isRestored() && !stateNamesItsSource) {
        // a state of a release that kept no ids: the table's positions are the best witness
        TablePositions.readSink(table, sinkId)
            .filter(
                p ->
                    p.offsets().keySet().stream()
                        .anyMatch(k -> ids.topicId(SourceKeys.topic(k)) != null))
            .ifPresent(p -> refuseAnotherSource(p.ids()));
      }
      Table rejectsTable = null;
      if (r != null) {
        r.open();
        rejectsTable = r.loadTable();
      }
      if (context.isRestored()) {
        for (String ids : state.get()) {
          resumeSnapshot = Long.parseLong(ids.substring(0, ids.indexOf('/')));
          rejectsSnapshot = Long.parseLong(ids.substring(ids.indexOf('/') + 1));
        }
      } else {
        resumeSnapshot = resumeAt[0];
        rejectsSnapshot = resumeAt[1];
      }
      if (rejectsTable == null) {
        rejectsSnapshot = -1; // a job without a rejects table
      }
      if (resumeSnapshot < 0 && rejectsSnapshot < 0) {
        return;
      }
      try {
        committed =
            CommittedRecords.read(
                table, resumeSnapshot, rejectsTable, rejectsSnapshot, sinkId, ids);
      } catch (IllegalStateException expired) {
        // its window (about L of data after that start) passed long before a snapshot is expired
        LOG.info("Resume snapshot {} expired: nothing left to skip", resumeSnapshot);
        resumeSnapshot = -1;
        return;
      }
    }
    if (committed.isEmpty()) {
      resumeSnapshot = -1;
      rejectsSnapshot = -1;
    } else if (!context.isRestored()) {
      logStart();
    }
  }

  private void logStart() {
    if (committed.isEmpty()) {
      return;
    }
    long above = committed.above().values().stream().mapToLong(a -> a.length).sum();
    LOG.info(
        "Start without state: the tables record positions for {} partitions and hold {} records above them, "
            + "and {} lines of {} files; those are skipped",
        committed.positions().size(),
        above,
        committed.files().values().stream().mapToLong(PositionRanges::count).sum(),
        committed.files().size());
  }

  @Override
  public void open(OpenContext openContext) {
    skipped = getRuntimeContext().getMetricGroup().counter("skippedCommitted");
    skippedTotal = new LongCounter();
    getRuntimeContext().addAccumulator(SKIPPED_ACCUMULATOR, skippedTotal);
  }

  @Override
  public void processElement(SourceRecord record, Context ctx, Collector<SourceRecord> out) {
    if (record.source != null
        && !committed.isEmpty()
        && isCommitted(record.source, record.position())) {
      skipped.inc();
      skippedTotal.add(1);
      return;
    }
    out.collect(record);
  }

  private boolean isCommitted(String source, long position) {
    if (committed.contains(source, position)) {
      return true;
    }
    List<String> earlier = fileAliases.get(source);
    if (earlier != null) {
      for (String key : earlier) {
        if (committed.contains(key, position)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * A restore resumes from its state's offsets, so the ids the state records with them decide
   * whether they apply, not the table's positions: those stay of the old topic (or cluster) until
   * the first commit after a re-creation, so a start after it that committed nothing would be
   * refused by them, and one before its first commit has none that could tell. Offsets of a topic
   * since created again, or of another cluster, are refused (non-recoverable: a restart would
   * restore the same offsets).
   */
  private void refuseAnotherSource(KafkaIds stateIds) {
    if (stateIds.clusterId() != null
        && ids.clusterId() != null
        && !stateIds.clusterId().equals(ids.clusterId())) {
      throw new SuppressRestartsException(
          TopicIdGuard.otherClusterAtRestore(stateIds.clusterId(), ids.clusterId()));
    }
    for (String topic : stateIds.topicIds().keySet()) {
      if (stateIds.topicRecreated(topic, ids)) {
        throw new SuppressRestartsException(
            TopicIdGuard.recreated(
                "Refusing to restore", topic, stateIds.topicId(topic), ids.topicId(topic)));
      }
    }
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    if (ids.clusterId() != null || !ids.topicIds().isEmpty()) {
      sourceIds.update(Collections.nCopies(COPIES_PER_SUBTASK, ids.encode()));
    }
    if (resumeSnapshot < 0 && rejectsSnapshot < 0) {
      state.clear();
      return;
    }
    List<String> ids = new ArrayList<>(COPIES_PER_SUBTASK);
    for (int i = 0; i < COPIES_PER_SUBTASK; i++) {
      ids.add(resumeSnapshot + "/" + rejectsSnapshot);
    }
    state.update(ids);
  }
}
