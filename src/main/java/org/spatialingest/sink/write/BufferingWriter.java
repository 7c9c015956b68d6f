package org.spatialingest.sink.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.metrics.Counter;
import org.apache.iceberg.DataFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ReportedPositions;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.SinkFaults;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.sink.core.SinkTable;
import org.spatialingest.sink.core.SinkTables;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.table.LibraryThreads;

/**
 * A writer subtask of the bounded sink. Rows are buffered per table and time partition as
 * serialized bytes, measured as they arrive; the {@link ClosePolicy} decides every close (at each
 * barrier, after each row, at the end of input) and the writer writes what it is told. Files closed
 * in an interval go downstream in the {@link WriterReport} of the next barrier, with the source
 * positions the writer has received and still buffers.
 *
 * <p>Checkpoint cost follows arrivals, not the buffer: at each barrier only the rows that arrived
 * since the previous one are written, once, to a staging run ({@link StagingArea}); the state holds
 * the runs' paths. The data file is still written from memory when the buffer closes; its runs are
 * deleted once it is committed.
 *
 * <p>When more buffers are open than {@code sink.max-open-partitions}, the least recently written
 * is parked rather than written as a small file: its staged rows leave memory at once, its rows
 * since the last barrier when the next barrier stages them (or at once, to a run of their own, when
 * memory is needed), and it closes later (by T once rows arrive for it again, by L at a barrier, by
 * M, at the end of input), its file written once from its runs and the rows since. Parking writes
 * nothing of its own: the barrier's runs are the same as without it; closing a parked buffer reads
 * its runs back.
 *
 * <p>All encoding and I/O happens on the task thread: when the writer cannot keep up, Flink's
 * credit-based flow control pauses the source and the backlog stays in Kafka.
 */
@Internal
public final class BufferingWriter<T>
    implements CommittingSinkWriter<T, WriterReport>, StatefulSinkWriter<T, WriterState> {
  private static final Logger LOG = LoggerFactory.getLogger(BufferingWriter.class);

  private final TableRouter<T> router;
  private final ClosePolicy policy;
  private final PartitionLimitWarning partitionLimitWarning;
  private final LateArrivalWarning lateArrivalWarning;
  private final String token = SinkFileNames.newToken();
  private final List<TableWriter> tables = new ArrayList<>();

  /** highest source position received per key, across tables (inclusive) */
  private final SourceMarks highestReceived = SourceMarks.highest();

  /** files closed since the last barrier */
  private final List<ClosedFile> closed = new ArrayList<>();

  /** source keys of the rows in {@link #closed} */
  private final Set<String> closedKeys = new HashSet<>();

  /** what this writer's reports told the aggregator: the next one carries what changed */
  private final ReportedPositions reported = new ReportedPositions();

  private int stagingSequence;

  /**
   * The last barrier this writer snapshotted (or restored): a run parked between barriers is named
   * with the next one, the first state that can reference it, so a failure before that barrier
   * leaves it to the orphan clean-up.
   */
  private long lastCheckpointId;

  private final WriterMetrics metrics;

  /** Flink's count of records in, kept in rows: a batch is counted once by Flink */
  private final Counter rowsReceived;

  public BufferingWriter(
      SinkTables sinkTables,
      TableRouter<T> router,
      ClosePolicy policy,
      long rowGroupBytes,
      SinkScope scope,
      WriterInitContext context,
      Collection<WriterState> restored)
      throws IOException {
    LibraryThreads.stopOnRelease(context.getUserCodeClassLoader());
    this.router = router;
    this.policy = policy;
    this.partitionLimitWarning = new PartitionLimitWarning(policy.maxParkedPartitions());
    this.lateArrivalWarning = new LateArrivalWarning(policy.maxLatencyMillis());
    int subtask = context.getTaskInfo().getIndexOfThisSubtask();
    int attempt = context.getTaskInfo().getAttemptNumber();
    for (int i = 0; i < sinkTables.size(); i++) {
      SinkTable t = sinkTables.get(i);
      tables.add(
          new TableWriter(
              i,
              t.loader().clone(),
              t.layout(),
              rowGroupBytes,
              scope,
              token,
              subtask,
              attempt,
              highestReceived,
              t.seedRatio()));
    }
    this.metrics = new WriterMetrics(context.metricGroup(), tables);
    this.rowsReceived = context.metricGroup().getIOMetricGroup().getNumRecordsInCounter();
    this.lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
    restore(restored);
  }

  @Override
  public void write(T element, Context context) throws IOException {
    RowBatch batch = router.batch(element);
    if (batch != null) {
      write(batch);
      return;
    }
    TableWriter table = tables.get(router.table(element));
    added(table, table.add(router.row(element), router.bufferId(element)));
  }

  /**
   * Buffers a batch's rows as they were serialized; the partition key is computed for its first row
   * only when the batch was grouped by this writer's partition spec.
   */
  private void write(RowBatch batch) throws IOException {
    TableWriter table = tables.get(batch.table());
    byte[] rows = batch.rows();
    MemorySegment segment = MemorySegmentFactory.wrap(rows);
    boolean samePartition = false;
    int count = 0;
    for (int offset = 0; offset < rows.length; ) {
      int length = Integer.BYTES + RowBatch.rowLength(rows, offset);
      added(table, table.addFromBatch(batch, segment, offset, length, samePartition));
      samePartition = batch.specId() == table.spec().specId();
      offset += length;
      count++;
    }
    rowsReceived.inc(count - 1);
  }

  /** The close decisions after each buffered row. */
  private void added(TableWriter table, PartitionBuffer buffer) throws IOException {
    if (policy.partitionLimitExceeded(table.buffers().size())) {
      enforcePartitionLimit(table);
    }
    if (policy.targetReached(buffer.bytes(), table.encodedRatio())) {
      close(table, List.of(buffer), CloseReason.BYTES, 1);
    } else if (policy.tooLargeToLoad(buffer)) {
      close(table, List.of(buffer), CloseReason.MEMORY, 1);
    }
    enforceMemoryBudget();
  }

  /**
   * Parks the least recently written open buffers (never the one just written) while more are open
   * than allowed; past the parked limit, the least recently written parked one closes first.
   */
  private void enforcePartitionLimit(TableWriter table) throws IOException {
    while (policy.partitionLimitExceeded(table.buffers().size())) {
      if (policy.parkedLimitReached(table.buffers().parked())) {
        PartitionBuffer victim = table.buffers().leastRecentlyWrittenParked();
        if (victim == null) {
          victim = table.buffers().leastRecentlyWritten();
        }
        partitionLimitWarning.closed(victim.size(), System.currentTimeMillis());
        close(table, List.of(victim), CloseReason.PARTITION_LIMIT, 1);
        continue;
      }
      park(table, table.buffers().leastRecentlyWritten(), false);
    }
  }

  /**
   * Parks a buffer: its staged rows leave memory at once; with {@code spill} its rows in no run yet
   * are first written to one (when memory is needed now), otherwise they stay in memory until the
   * next barrier stages them, so parking adds no run of its own.
   */
  private void park(TableWriter table, PartitionBuffer buffer, boolean spill) throws IOException {
    if (spill && buffer.stagedRows() < buffer.size()) {
      metrics.runStaged(table.stageNewRows(lastCheckpointId + 1, token, stagingSequence++, buffer));
    }
    boolean wasParked = buffer.isParked();
    table.buffers().park(buffer);
    if (!wasParked) {
      metrics.parked();
      SinkFaults.reach(SinkFaults.Point.AFTER_PARKING);
    }
  }

  @Override
  public void flush(boolean endOfInput) throws IOException {
    if (endOfInput) {
      for (TableWriter table : tables) {
        for (List<PartitionBuffer> partition : table.buffers().byPartition()) {
          closeAll(table, policy.atEndOfInput(partition, table.encodedRatio()));
        }
      }
      SinkFaults.reach(SinkFaults.Point.AFTER_END_OF_INPUT);
    }
  }

  @Override
  public Collection<WriterReport> prepareCommit() throws IOException {
    long now = System.currentTimeMillis();
    for (TableWriter table : tables) {
      for (List<PartitionBuffer> partition : table.buffers().byPartition()) {
        closeAll(
            table,
            policy.atBarrier(partition, now, table.encodedRatio(), table.writeNanosPerByte()));
      }
    }
    lateArrivalWarning.barrier(now);
    Map<String, Long> receivedEnds = new HashMap<>();
    highestReceived.mergeInto(receivedEnds, 1);
    Map<String, Long> buffered = new HashMap<>();
    for (TableWriter table : tables) {
      for (PartitionBuffer buffer : table.buffers().all()) {
        buffer.lowestPositions().mergeInto(buffered, 0);
      }
    }
    WriterReport report = reported.next(token, closed, receivedEnds, buffered, closedKeys);
    closed.clear();
    closedKeys.clear();
    return List.of(report);
  }

  /**
   * Stages the rows that arrived since the previous barrier; the state is the list of every open
   * buffer's runs.
   */
  @Override
  public List<WriterState> snapshotState(long checkpointId) throws IOException {
    lastCheckpointId = checkpointId;
    long start = System.currentTimeMillis();
    List<WriterState.StagedRun> runs = new ArrayList<>();
    for (TableWriter table : tables) {
      for (PartitionBuffer buffer : table.buffers().all()) {
        if (buffer.stagedRows() < buffer.size()) {
          metrics.runStaged(table.stageNewRows(checkpointId, token, stagingSequence++, buffer));
        }
        if (buffer.isParked() && buffer.memoryBytes() > 0) {
          table.buffers().park(buffer); // its rows since parking are staged now: release them
        }
        // a buffer's runs hold disjoint rows, in arrival order; the count per run is checked on
        // restore
        int previous = 0;
        List<String> paths = buffer.stagedRuns();
        for (int i = 0; i < paths.size(); i++) {
          int upTo = buffer.runEnd(i);
          runs.add(
              new WriterState.StagedRun(
                  table.index(),
                  buffer.bufferId(),
                  paths.get(i),
                  upTo - previous,
                  upTo <= buffer.parkedRows()));
          previous = upTo;
        }
      }
    }
    metrics.stagingTook(System.currentTimeMillis() - start);
    SinkFaults.reach(SinkFaults.Point.AFTER_STAGING);
    return runs.isEmpty() ? List.of() : List.of(new WriterState(runs));
  }

  @Override
  public void close() throws Exception {
    for (TableWriter table : tables) {
      table.close();
    }
  }

  private void restore(Collection<WriterState> restored) throws IOException {
    DataInputDeserializer in = new DataInputDeserializer();
    long runs = 0;
    for (WriterState state : restored) {
      for (WriterState.StagedRun run : state.runs()) {
        tables.get(run.table()).restore(run, in);
        runs++;
      }
      for (RowBatch batch : state.unstaged()) {
        bufferUnstaged(batch);
      }
    }
    long rows = 0;
    long bytes = 0;
    int parked = 0;
    for (TableWriter table : tables) {
      rows += table.buffers().rows();
      bytes += table.buffers().bytes();
      parked += table.buffers().parked();
    }
    if (parked > 0) {
      LOG.info("Restored {} parked partition buffers (their rows stay in their runs)", parked);
      SinkFaults.reach(SinkFaults.Point.RESTORED_PARKED);
    }
    if (rows > 0) {
      LOG.info(
          "Restored {} buffered rows ({} bytes in memory) from {} staging runs", rows, bytes, runs);
    }
    for (TableWriter table : tables) {
      enforcePartitionLimit(table);
    }
    enforceMemoryBudget();
  }

  /**
   * Buffers the rows of a restored batch no run holds, as input is buffered but without the close
   * decisions (restore enforces the limits once all is buffered); the next barrier stages them.
   */
  private void bufferUnstaged(RowBatch batch) {
    TableWriter table = tables.get(batch.table());
    byte[] rows = batch.rows();
    MemorySegment segment = MemorySegmentFactory.wrap(rows);
    for (int offset = 0; offset < rows.length; ) {
      int length = Integer.BYTES + RowBatch.rowLength(rows, offset);
      table.addFromBatch(batch, segment, offset, length, false);
      offset += length;
    }
  }

  /**
   * Reads the parked rows of {@code buffers} back from their runs, first parking other buffers
   * (most bytes in memory first) while the read would take the writer past M.
   */
  private void loadParked(TableWriter table, List<PartitionBuffer> buffers) throws IOException {
    long load = 0;
    for (PartitionBuffer buffer : buffers) {
      load += buffer.parkedBytes();
    }
    if (load == 0) {
      return;
    }
    while (policy.makeRoomFor(bufferedBytes(), load)) {
      PartitionBuffer largest = null;
      TableWriter owner = null;
      for (TableWriter t : tables) {
        PartitionBuffer candidate = t.buffers().largest(buffers);
        if (candidate != null
            && (largest == null || candidate.memoryBytes() > largest.memoryBytes())) {
          largest = candidate;
          owner = t;
        }
      }
      if (largest == null) {
        break;
      }
      park(owner, largest, true);
    }
    for (PartitionBuffer buffer : buffers) {
      if (buffer.parkedRows() > 0) {
        metrics.parkedRead(table.loadParked(buffer));
      }
    }
  }

  /**
   * Writes the unstaged rows of the parked buffer holding the most of them to a run and releases
   * them; false if no parked buffer holds rows in memory.
   */
  private boolean spillParked() throws IOException {
    for (TableWriter table : tables) {
      PartitionBuffer parked = table.buffers().largestParkedInMemory();
      if (parked != null) {
        park(table, parked, true);
        return true;
      }
    }
    return false;
  }

  /**
   * Memory wins over file size: first the rows parked buffers still hold in memory are staged, then
   * what the policy picks closes, until under the budget.
   */
  private void enforceMemoryBudget() throws IOException {
    while (policy.memoryFull(bufferedBytes())) {
      if (spillParked()) {
        continue;
      }
      List<PartitionBuffer> largestPerTable = new ArrayList<>(tables.size());
      for (TableWriter table : tables) {
        largestPerTable.add(table.buffers().largest());
      }
      PartitionBuffer largest = policy.largest(largestPerTable);
      if (largest == null) {
        return;
      }
      close(tables.get(largestPerTable.indexOf(largest)), List.of(largest), CloseReason.MEMORY, 1);
      SinkFaults.reach(SinkFaults.Point.AFTER_MEMORY_FLUSH);
    }
  }

  private long bufferedBytes() {
    long bytes = 0;
    for (TableWriter table : tables) {
      bytes += table.buffers().bytes();
    }
    return bytes;
  }

  private void closeAll(TableWriter table, List<ClosePolicy.Close<PartitionBuffer>> files)
      throws IOException {
    for (ClosePolicy.Close<PartitionBuffer> file : files) {
      close(table, file.buffers(), file.reason(), file.files());
    }
  }

  /**
   * Writes {@code buffers} (of one partition, in key order) as {@code files} data files cut in key
   * order, reported at the next barrier. Each file carries the buffered bytes of its own rows; the
   * first carries the buffers' ingest seconds and staging runs for all of them (a close's files go
   * in one report, so they commit together, and the commit sums these fields over its files).
   */
  private void close(
      TableWriter table, List<PartitionBuffer> buffers, CloseReason reason, int files)
      throws IOException {
    long bytes = 0;
    long minIngest = Long.MAX_VALUE;
    long maxIngest = Long.MIN_VALUE;
    long ageWhenOpened = Long.MIN_VALUE;
    IngestTimeCounts ingestTimes = new IngestTimeCounts();
    List<String> staged = new ArrayList<>();
    loadParked(table, buffers);
    for (PartitionBuffer buffer : buffers) {
      bytes += buffer.bytes();
      minIngest = Math.min(minIngest, buffer.minIngestMillis());
      maxIngest = Math.max(maxIngest, buffer.maxIngestMillis());
      ageWhenOpened = Math.max(ageWhenOpened, buffer.openedAtMillis() - buffer.minIngestMillis());
      ingestTimes.addAll(buffer.ingestTimes().toMap());
      staged.addAll(buffer.stagedRuns());
      buffer.lowestPositions().keysInto(closedKeys);
    }
    List<SortedFileWriter.Written> written = table.write(buffers, files, policy);
    long closedAt = System.currentTimeMillis();
    for (int i = 0; i < written.size(); i++) {
      DataFile file = written.get(i).file();
      closed.add(
          new ClosedFile(
              table.index(),
              file,
              table.spec(),
              reason,
              written.get(i).bufferedBytes(),
              minIngest,
              maxIngest,
              closedAt,
              i == 0 ? ingestTimes.toMap() : Map.of(),
              i == 0 ? staged : List.of()));
      metrics.fileClosed(reason);
      LOG.debug(
          "Closed {} ({} rows, file {} of {} cut from {} buffers of {} buffered bytes -> {} file"
              + " bytes) by {}",
          file.location(),
          file.recordCount(),
          i + 1,
          written.size(),
          buffers.size(),
          bytes,
          file.fileSizeInBytes(),
          reason.code());
      SinkFaults.reach(SinkFaults.Point.AFTER_FILE_WRITTEN);
    }
    if (reason == CloseReason.LATENCY && lateArrivalWarning.latencyClose(ageWhenOpened)) {
      metrics.lateArrivalClosed();
    }
  }
}
