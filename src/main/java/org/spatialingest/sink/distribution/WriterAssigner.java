package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.operators.coordination.OperatorEventGateway;
import org.apache.flink.runtime.operators.coordination.OperatorEventHandler;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.options.DistributionMode;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.LibraryThreads;

/**
 * The placement step in front of the sink's writers, as a Flink operator: each element gets a
 * writer slot (the exchange takes it modulo the writer count) and a buffer id, and leaves in a
 * {@link RowBatch}. The operator is glue; each role has its class:
 *
 * <ul>
 *   <li>where a row goes: {@link RangePlacement} (per table {@link TablePlacement}, per partition
 *       {@link PartitionPlacement}: the slot math over the coordinator's {@link GlobalRanges} or
 *       the fallback from this subtask's {@link KeySample});
 *   <li>the batches on their way: {@link RowBatcher} (sent before each checkpoint barrier and at
 *       the end of input, so nothing here is state);
 *   <li>the first rows after a start: {@link StartupHold} (held until the coordinator's first
 *       boundaries come, and the early report), with the timings it shares with the coordinator in
 *       {@link StartupTimings};
 *   <li>the Parquet/buffered byte ratio the range count assumes: {@link EncodedRatioReader}, a
 *       thread of its own.
 * </ul>
 *
 * <p>Events: at open it asks the {@link RangeCoordinator} for ranges ({@link RangeEvents.Request}),
 * at every checkpoint ({@code snapshotState}) and once early after a start it reports what it
 * sampled ({@link RangeEvents.Report}), at the end of input it says so ({@link
 * RangeEvents.Finished}); the coordinator's {@link RangeEvents.Ranges} replace the placement's.
 *
 * <p>Cost per row: a partition key computation and a hash lookup, a reservoir step, a binary search
 * over at most a few dozen boundaries, the row's serialization into its batch, and one more in
 * eight (the size sample).
 *
 * @param <T> the sink's input elements
 */
public final class WriterAssigner<T> extends AbstractStreamOperator<RowBatch>
    implements OneInputStreamOperator<T, RowBatch>, OperatorEventHandler, BoundedOneInput {

  /**
   * What the operator and its coordinator are built from.
   *
   * @param tables the sink's tables, in its order
   * @param seedRatio Parquet bytes per buffered byte of the ranged table's last commit when the job
   *     was built, or 0
   * @param ratioSource the ranged table, re-read for the ratio its writers learn ({@link
   *     EncodedRatioReader}), or {@code null}
   * @param inputType the elements' type, to copy the rows it holds
   */
  record Settings<T>(
      TableRouter<T> router,
      List<TablePlacement.Table> tables,
      DistributionMode mode,
      SizingBounds bounds,
      int writers,
      int maxOpenPartitions,
      double seedRatio,
      TableLoader ratioSource,
      TypeInformation<T> inputType)
      implements Serializable {}

  private final Settings<T> settings;
  private final OperatorEventGateway coordinator;
  private final transient MailboxExecutor anyMail;
  private final transient SubtaskReportSerializer reportSerializer = new SubtaskReportSerializer();
  private final transient GlobalRangesSerializer rangesSerializer = new GlobalRangesSerializer();

  private transient RangePlacement placement;
  private transient RowBatcher batcher;
  private transient StartupHold<T> hold;
  private transient EncodedRatioReader ratio;
  private transient TypeSerializer<T> copier;
  private transient long rows;

  private transient RowBatch out;
  private transient StreamRecord<RowBatch> outRecord;
  private transient Counter rowsSent;

  /** the vertex's (task's) records out, the Flink UI's "Records Sent": Flink counts each batch */
  private transient Counter vertexRowsSent;

  WriterAssigner(
      StreamOperatorParameters<RowBatch> parameters,
      Settings<T> settings,
      OperatorEventGateway coordinator) {
    super(parameters);
    this.settings = settings;
    this.coordinator = coordinator;
    // operator events reach the task as mails of the lowest priority: waiting for one must take
    // those too
    this.anyMail =
        parameters
            .getContainingTask()
            .getMailboxExecutorFactory()
            .createExecutor(TaskMailbox.MIN_PRIORITY);
  }

  @Override
  public void open() throws Exception {
    super.open();
    LibraryThreads.stopOnRelease(getRuntimeContext());
    out = new RowBatch();
    outRecord = new StreamRecord<>(out);
    rowsSent = getMetricGroup().getIOMetricGroup().getNumRecordsOutCounter();
    // the task's count is the sum of its network outputs' counters plus its own: this operator's
    // output always crosses the network (partitionCustom), so the rows added here are rows sent
    vertexRowsSent = metrics.getTaskIOMetricGroup().getNumRecordsOutCounter();
    List<RowDataSerializer> serializers = new ArrayList<>();
    settings.tables().forEach(t -> serializers.add(new RowDataSerializer(t.layout().rowType())));
    batcher = new RowBatcher(serializers, this::send);
    boolean rangeMode = settings.mode() == DistributionMode.RANGE;
    ratio =
        settings.ratioSource() != null && rangeMode
            ? EncodedRatioReader.start(settings.ratioSource(), settings.seedRatio())
            : EncodedRatioReader.fixed(settings.seedRatio());
    placement =
        new RangePlacement(
            settings.tables(),
            settings.mode(),
            settings.bounds(),
            settings.writers(),
            settings.maxOpenPartitions(),
            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
            getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
            ratio::ratio,
            batcher,
            System::nanoTime,
            System::currentTimeMillis);
    copier = settings.inputType().createSerializer(getExecutionConfig().getSerializerConfig());
    hold =
        new StartupHold<>(
            getOperatorName(),
            rangeMode && placement.anyRanged(),
            getProcessingTimeService()::getCurrentProcessingTime,
            new StartupHold.Protocol<>() {
              @Override
              public void announceFirstRows() {
                coordinator.sendEventToCoordinator(new RangeEvents.Request(true));
              }

              @Override
              public void sendEarlyReport() {
                report(0);
              }

              @Override
              public void release(List<T> held) {
                placeHeld(held);
              }
            });
    // after a restart the coordinator may already have ranges: ask for them
    coordinator.sendEventToCoordinator(new RangeEvents.Request(false));
  }

  @Override
  public void close() throws Exception {
    if (ratio != null) {
      ratio.close();
    }
    super.close();
  }

  @Override
  public void processElement(StreamRecord<T> record) throws Exception {
    T element = record.getValue();
    if (!placement.started()) {
      placement.start();
    }
    TablePlacement table = placement.table(settings.router().table(element));
    RowData row = settings.router().row(element);
    PartitionPlacement partition = placement.partition(table, row);
    long sampledBytes = 0;
    if (table.ranged()) {
      if (hold.rangedRow()) {
        getProcessingTimeService().registerTimer(hold.earlyReportDueMillis(), hold::onTime);
        getProcessingTimeService().registerTimer(hold.holdEndsMillis(), hold::onTime);
      }
      sampledBytes = placement.sample(table, partition, row);
    }
    rows++;
    hold.counted(rows);
    if (hold.holding() && table.ranged()) {
      hold.hold(copier.copy(element), sampledBytes);
    } else {
      placement.place(table, partition, row);
    }
    if ((rows & 255) == 0) {
      placement.refreshIfDue();
    }
  }

  /** Places rows the hold released: by the global ranges if they came, else by the fallback. */
  private void placeHeld(List<T> held) {
    if (!placement.hasGlobalRanges()) {
      placement.refreshNow();
    }
    for (T element : held) {
      TablePlacement table = placement.table(settings.router().table(element));
      RowData row = settings.router().row(element);
      placement.place(table, placement.partition(table, row), row);
    }
  }

  /** One batch out: the {@link RowBatcher}'s output. */
  private void send(int slot, int table, int specId, int bufferId, byte[] batch, int rowCount) {
    out.f0 = slot;
    out.f1 = table;
    out.f2 = specId;
    out.f3 = bufferId;
    out.f4 = batch;
    output.collect(outRecord);
    // the operator's numRecordsOut and the vertex's "Records Sent" count rows, as before batching:
    // the collect counted one
    rowsSent.inc(rowCount - 1);
    vertexRowsSent.inc(rowCount - 1);
  }

  @Override
  public void endInput() throws Exception {
    hold.inputEnded();
    // takes mails so the coordinator's event can arrive; the hold's clock is the processing time
    // (in a test harness it stands still: deliver the ranges or set it past the hold first)
    while (hold.awaitingRanges()) {
      if (!anyMail.tryYield()) {
        Thread.sleep(5);
      }
    }
    hold.end("the end of input");
    batcher.sendAll();
    coordinator.sendEventToCoordinator(new RangeEvents.Finished());
  }

  @Override
  public void finish() throws Exception {
    hold.end("finish");
    batcher.sendAll();
    super.finish();
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    hold.releaseBeforeBarrier();
    batcher.sendAll();
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    report(context.getCheckpointId());
  }

  /** Sends the coordinator what this subtask sampled since its last report. */
  private void report(long round) {
    try {
      coordinator.sendEventToCoordinator(
          new RangeEvents.Report(
              SubtaskReportSerializer.VERSION,
              reportSerializer.serialize(placement.report(round))));
    } catch (IOException e) {
      throw new UncheckedIOException("serializing a range report", e);
    }
  }

  @Override
  public void handleOperatorEvent(OperatorEvent event) {
    if (!(event instanceof RangeEvents.Ranges ranges)) {
      throw new IllegalArgumentException("unexpected operator event " + event);
    }
    try {
      placement.useGlobal(rangesSerializer.deserialize(ranges.version(), ranges.bytes()));
    } catch (IOException e) {
      throw new UncheckedIOException("reading the coordinator's ranges", e);
    }
    hold.rangesCame();
  }
}
