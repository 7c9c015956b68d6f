package org.spatialingest.sink.distribution;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
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
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.RowDataWrapper;
import org.apache.iceberg.flink.TableLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig.DistributionMode;
import org.spatialingest.sink.core.RowBatch;
import org.spatialingest.sink.core.TableRouter;
import org.spatialingest.sink.write.BufferedRowSize;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.table.LibraryThreads;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.TableLayout;

/**
 * Places each element on a writer: a writer slot (the exchange takes it modulo the writer count)
 * and the key range of its partition (its buffer id, see {@link RangeCount#finest}). Rows go out
 * serialized, in a {@link RowBatch} per slot, table, partition and key range, sent when it holds
 * {@link #BATCH_BYTES}, when this subtask holds {@link #PENDING_BYTES} in all its batches, before
 * each checkpoint barrier and at the end of input (so no row crosses a barrier in a batch: nothing
 * here is state, and a writer's commit covers every row sent before the barrier). The finest split
 * of a partition's keys is cut into one block of neighbouring ranges per writer, starting at writer
 * {@code hash(partition)}: every subtask sends a range to the same writer, a partition's ranges
 * spread over the writers, and the ranges a writer holds are adjacent in Hilbert order, so its
 * latency close can pack their remainders into one file that still covers one compact area.
 *
 * <p><b>Global ranges.</b> Every subtask samples the sort keys it routes into each partition of the
 * ranged table ({@link KeyReservoir}) and the bytes they bring (the sink's own {@link
 * BufferedRowSize} measure, on a random eighth of the rows), and reports them to the {@link
 * RangeCoordinator} at every checkpoint and once early after a start. The coordinator merges all
 * reports and sends back one range count and one set of boundaries per partition, used by every
 * subtask, plus the quantiles of all the table's keys for a partition it has not seen yet (that
 * partition's count then comes from this subtask's own rate until the next merge).
 *
 * <p><b>Before the first merge</b> (a start, with no ranges restored by the coordinator): the rows
 * of the ranged table are held, copied, until the boundaries arrive (normally within one to two
 * seconds), for at most {@link #HOLD_MILLIS}, {@link #HOLD_ROWS} rows or {@link #HOLD_BYTES} bytes.
 * The coordinator completes no checkpoint while its early merge is due (at most {@link
 * RangeCoordinator#EARLY_WAIT_MILLIS}), so the boundaries normally reach every subtask before the
 * first barrier. Held rows never cross a barrier: the sink's positions rely on every row read
 * before a barrier having reached a writer (and the rejects, placed by another instance of this
 * operator, pass no held row that way either); rows still held there go out by the fallback, and
 * the hold goes on. At the end of input it waits for the merge up to the same time. If no
 * boundaries came, the held rows and those after them use the fallback: this subtask's own
 * statistics, as before global ranges existed — the last {@link KeySample#SIZE} keys it saw, cut
 * about once a second at the count its own rate times the subtask count asks for. Nothing of this
 * is in operator state: the coordinator's checkpoint holds the statistics, and a range is only a
 * file boundary (a writer accepts any row).
 *
 * <p>Cost per row: a partition key computation and a hash lookup, a reservoir step, a binary search
 * over at most a few dozen boundaries, the row's serialization into its batch, and one more in
 * eight (the size sample).
 *
 * @param <T> the sink's input elements
 */
public final class WriterAssigner<T> extends AbstractStreamOperator<RowBatch>
    implements OneInputStreamOperator<T, RowBatch>, OperatorEventHandler, BoundedOneInput {
  private static final Logger LOG = LoggerFactory.getLogger(WriterAssigner.class);

  /**
   * A batch is sent once it holds this many bytes: per-record costs of the exchange are paid once
   * per tens of point rows, and a batch of small rows fits one network buffer (32 KB).
   */
  static final int BATCH_BYTES = 16 << 10;

  /** All batches are sent once this subtask's batches hold this many bytes together. */
  static final int PENDING_BYTES = 1 << 20;

  /** One row in this many is serialized to measure bytes. */
  private static final int SIZE_SAMPLING = 8;

  private static final long REFRESH_NANOS = 1_000_000_000L;

  /** Rows after which a subtask sends its early report after a start. */
  static final int EARLY_ROWS = 2_048;

  /**
   * Time after its first row at which a subtask sends its early report, if it has fewer rows: the
   * sources' first half second differs in speed by 2x and more on a loaded machine, which weighs
   * the areas of a keyed topic unevenly.
   */
  static final long EARLY_MILLIS = 1_000;

  /** The longest the first rows after a start wait for the coordinator's boundaries. */
  static final long HOLD_MILLIS = 3_000;

  static final int HOLD_ROWS = 20_000;
  static final long HOLD_BYTES = 32L << 20;

  /** How often the Parquet/buffered byte ratio is re-read from the ranged table's last commit. */
  private static final long RATIO_REFRESH_SECONDS = 10;

  /**
   * One table of the sink: its layout, partition spec and the schema its rows are written with (the
   * table's field ids, see {@link TableLayout#writeSchema}); {@code ranged} when its rows are split
   * by key range.
   */
  record Placement(TableLayout layout, PartitionSpec spec, Schema writeSchema, boolean ranged)
      implements Serializable {}

  /**
   * What the operator and its coordinator are built from.
   *
   * @param seedRatio Parquet bytes per buffered byte of the ranged table's last commit when the job
   *     was built, or 0
   * @param ratioSource the ranged table, re-read every {@value #RATIO_REFRESH_SECONDS} s for the
   *     ratio its writers learn (off the task thread), or {@code null}
   * @param inputType the elements' type, to copy the rows it holds
   */
  record Settings<T>(
      TableRouter<T> router,
      List<Placement> placements,
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

  private transient List<TablePlacement> tables;
  private transient RowBatch out;
  private transient Counter rowsSent;

  /** the vertex's (task's) records out, the Flink UI's "Records Sent": Flink counts each batch */
  private transient Counter vertexRowsSent;

  private transient StreamRecord<RowBatch> outRecord;

  /** batches holding rows (and some emptied since), in the order they were first filled */
  private transient List<Batch> pending;

  private transient long pendingBytes;
  private transient SplittableRandom random;
  private transient int subtasks;
  private transient long rows;
  private transient long windowStart;
  private transient boolean refreshed;
  private transient RangeCount rangeCount;
  private transient volatile double ratio;
  private transient ScheduledExecutorService ratioReader;
  private transient GlobalRanges global;
  private transient TypeSerializer<T> copier;
  private transient List<T> held;
  private transient long heldBytes;
  private transient boolean holding;
  private transient boolean announced;
  private transient long firstRowMillis;
  private transient long reportWindowStart;
  private transient boolean reported;
  private final transient SubtaskReportSerializer reportSerializer = new SubtaskReportSerializer();
  private final transient GlobalRangesSerializer rangesSerializer = new GlobalRangesSerializer();

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
    subtasks = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
    boolean rangeMode = settings.mode() == DistributionMode.RANGE;
    tables = new ArrayList<>(settings.placements().size());
    for (int i = 0; i < settings.placements().size(); i++) {
      tables.add(new TablePlacement(i, settings.placements().get(i), rangeMode));
    }
    out = new RowBatch();
    outRecord = new StreamRecord<>(out);
    rowsSent = getMetricGroup().getIOMetricGroup().getNumRecordsOutCounter();
    // the task's count is the sum of its network outputs' counters plus its own: this operator's
    // output always crosses the network (partitionCustom), so the rows added here are rows sent
    vertexRowsSent = metrics.getTaskIOMetricGroup().getNumRecordsOutCounter();
    pending = new ArrayList<>();
    random = new SplittableRandom(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
    ratio = settings.seedRatio();
    rangeCount =
        RangeCount.of(settings.bounds(), ratio, settings.writers(), settings.maxOpenPartitions());
    copier = settings.inputType().createSerializer(getExecutionConfig().getSerializerConfig());
    held = new ArrayList<>();
    holding = rangeMode && tables.stream().anyMatch(t -> t.sample != null);
    if (settings.ratioSource() != null && rangeMode) {
      ratioReader =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "distribution-ratio-reader");
                t.setDaemon(true);
                return t;
              });
      TableLoader loader = settings.ratioSource().clone();
      ratioReader.scheduleWithFixedDelay(
          () -> readRatio(loader), RATIO_REFRESH_SECONDS, RATIO_REFRESH_SECONDS, TimeUnit.SECONDS);
    }
    // after a restart the coordinator may already have ranges: ask for them
    coordinator.sendEventToCoordinator(new RangeEvents.Request(false));
  }

  @Override
  public void close() throws Exception {
    if (ratioReader != null) {
      ratioReader.shutdownNow();
    }
    super.close();
  }

  /**
   * The writers' encoded/buffered ratio, as their last commit recorded it; a failed read keeps the
   * previous one.
   */
  private void readRatio(TableLoader loader) {
    try {
      if (!loader.isOpen()) {
        loader.open();
      }
      Table table = loader.loadTable();
      Snapshot current = table.currentSnapshot();
      double read =
          current == null ? 0 : SnapshotSummaryKeys.encodedPerBufferedByte(current.summary());
      if (read > 0) {
        ratio = read;
      }
    } catch (RuntimeException e) {
      LOG.debug("reading the encoded/buffered ratio of the ranged table", e);
    }
  }

  @Override
  public void processElement(StreamRecord<T> record) throws Exception {
    T element = record.getValue();
    if (rows == 0) {
      onFirstRow();
    }
    TablePlacement table = tables.get(settings.router().table(element));
    RowData row = settings.router().row(element);
    Partition partition = table.partition(row);
    if (table.sample != null) {
      if (!announced) {
        announce();
      }
      long key = row.getLong(table.sortKeyField);
      table.sample.add(key);
      partition.reservoir.add(key, random);
      if (random.nextInt(SIZE_SAMPLING) == 0) {
        long bytes = table.measure(row) * SIZE_SAMPLING;
        long ingest = table.layout.ingestMillis(row);
        partition.local.add(bytes, ingest);
        partition.reservoir.addBytes(bytes, ingest);
        heldBytes += holding ? bytes : 0;
      }
    }
    rows++;
    if (!reported && rows >= EARLY_ROWS) {
      report(0);
    }
    if (holding && table.sample != null) {
      held.add(copier.copy(element));
      if (held.size() >= HOLD_ROWS || heldBytes >= HOLD_BYTES) {
        endHold("the hold limit");
      }
    } else {
      emit(element, table, partition, row);
    }
    if ((rows & 255) == 0) {
      refreshIfDue();
    }
  }

  private void onFirstRow() {
    windowStart = System.nanoTime();
    reportWindowStart = windowStart;
  }

  /**
   * At the first row of the ranged table after a start: tells the coordinator an early report
   * follows, and bounds the hold.
   */
  private void announce() {
    announced = true;
    firstRowMillis = System.currentTimeMillis();
    if (!holding) {
      return;
    }
    coordinator.sendEventToCoordinator(new RangeEvents.Request(true));
    long now = getProcessingTimeService().getCurrentProcessingTime();
    getProcessingTimeService()
        .registerTimer(
            now + EARLY_MILLIS,
            t -> {
              if (!reported) {
                report(0);
              }
            });
    getProcessingTimeService().registerTimer(now + HOLD_MILLIS, t -> endHold("the hold time"));
  }

  private void emit(T element, TablePlacement table, Partition partition, RowData row) {
    int range =
        table.sample == null
            ? 0
            : KeySample.rangeOf(partition.boundaries, row.getLong(table.sortKeyField));
    // the buffer id: stable when the count halves or doubles
    int bufferId = range * (partition.finest / partition.ranges);
    int slot = partition.base + (int) ((long) bufferId * settings.writers() / partition.finest);
    Batch batch = partition.batch(bufferId);
    if (batch.rows.length() > 0 && batch.slot != slot) {
      send(batch);
    }
    batch.slot = slot;
    if (!batch.queued) {
      batch.queued = true;
      pending.add(batch);
    }
    int before = batch.rows.length();
    try {
      table.serializer.serialize(row, batch.rows);
    } catch (IOException e) {
      throw new UncheckedIOException("serializing a row for its writer", e);
    }
    pendingBytes += batch.rows.length() - before;
    batch.count++;
    if (batch.rows.length() >= BATCH_BYTES) {
      send(batch);
    }
    if (pendingBytes >= PENDING_BYTES) {
      sendAll();
    }
  }

  private void send(Batch batch) {
    if (batch.rows.length() == 0) {
      return;
    }
    out.f0 = batch.slot;
    out.f1 = batch.table;
    out.f2 = batch.specId;
    out.f3 = batch.bufferId;
    out.f4 = batch.rows.getCopyOfBuffer();
    output.collect(outRecord);
    // the operator's numRecordsOut and the vertex's "Records Sent" count rows, as before batching:
    // the collect counted one
    rowsSent.inc(batch.count - 1);
    vertexRowsSent.inc(batch.count - 1);
    pendingBytes -= batch.rows.length();
    batch.rows.clear();
    batch.count = 0;
  }

  /** Sends every batch that holds rows. */
  private void sendAll() {
    for (Batch batch : pending) {
      send(batch);
      batch.queued = false;
    }
    pending.clear();
  }

  /** Ends the hold: the held rows and all after them are placed as they come. */
  private void endHold(String why) {
    if (!holding) {
      return;
    }
    holding = false;
    if (global == null && announced) {
      LOG.info(
          "{}: no global ranges after {} ({} rows held): placing by this subtask's own keys until"
              + " they come",
          getOperatorName(),
          why,
          held.size());
    }
    sendHeld();
  }

  /** Sends the held rows on, with the global ranges if they came, else with the fallback. */
  private void sendHeld() {
    if (held.isEmpty()) {
      return;
    }
    if (global == null) {
      refresh(Math.max(1e-3, (System.nanoTime() - windowStart) / 1e9));
    }
    for (T element : held) {
      TablePlacement table = tables.get(settings.router().table(element));
      RowData row = settings.router().row(element);
      emit(element, table, table.partition(row), row);
    }
    held = new ArrayList<>();
    heldBytes = 0;
  }

  /**
   * Waits, taking mails so the coordinator's event can arrive, until the held rows have their
   * ranges or the hold time is up.
   */
  private void awaitRanges() throws InterruptedException {
    if (!holding || held.isEmpty()) {
      return;
    }
    if (!reported) {
      report(0);
    }
    long deadline = firstRowMillis + HOLD_MILLIS;
    while (holding && global == null && System.currentTimeMillis() < deadline) {
      if (!anyMail.tryYield()) {
        Thread.sleep(5);
      }
    }
  }

  @Override
  public void endInput() throws Exception {
    awaitRanges();
    endHold("the end of input");
    sendAll();
    coordinator.sendEventToCoordinator(new RangeEvents.Finished());
  }

  @Override
  public void finish() throws Exception {
    endHold("finish");
    sendAll();
    super.finish();
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    // held rows are not state: they leave before the barrier, by the fallback if the ranges are
    // not here yet (waiting would not help: Flink holds back coordinator events between its
    // checkpoint and this barrier)
    sendHeld();
    sendAll();
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    report(context.getCheckpointId());
  }

  /** Sends the coordinator what this subtask routed since its last report. */
  private void report(long round) {
    long now = System.nanoTime();
    double seconds = rows == 0 ? 0 : Math.max(1e-3, (now - reportWindowStart) / 1e9);
    reportWindowStart = now;
    reported |= round == 0;
    List<List<SubtaskReport.PartitionSample>> perTable = new ArrayList<>(tables.size());
    for (TablePlacement table : tables) {
      List<SubtaskReport.PartitionSample> samples = new ArrayList<>();
      if (table.sample != null) {
        for (Partition p : table.partitions.values()) {
          if (!p.reservoir.isEmpty()) {
            samples.add(p.reservoir.drain(p.path));
          }
        }
      }
      perTable.add(samples);
    }
    try {
      coordinator.sendEventToCoordinator(
          new RangeEvents.Report(
              SubtaskReportSerializer.VERSION,
              reportSerializer.serialize(new SubtaskReport(round, seconds, ratio, perTable))));
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
      global = rangesSerializer.deserialize(ranges.version(), ranges.bytes());
    } catch (IOException e) {
      throw new UncheckedIOException("reading the coordinator's ranges", e);
    }
    for (TablePlacement table : tables) {
      table.useGlobal(global);
      table.partitions.values().forEach(p -> table.place(p, global, rangeCount));
    }
    endHold("the global ranges came");
  }

  /**
   * Called every 256 rows: the first refresh comes at once (a sample of 256 keys already places
   * rows far better than one range, and a backlog needs its ranges from the start), the next ones
   * once a second.
   */
  private void refreshIfDue() {
    long now = System.nanoTime();
    if (refreshed && now - windowStart < REFRESH_NANOS) {
      return;
    }
    refresh((now - windowStart) / 1e9);
  }

  private void refresh(double seconds) {
    windowStart = System.nanoTime();
    refreshed = true;
    if (ratio != rangeCount.encodedPerBufferedByte()) {
      rangeCount =
          RangeCount.of(settings.bounds(), ratio, settings.writers(), settings.maxOpenPartitions());
    }
    for (TablePlacement table : tables) {
      table.refresh(seconds, subtasks, rangeCount, global);
    }
  }

  /** What this subtask keeps of one partition. */
  private static final class Partition {
    final int base;
    final String path;

    /** this subtask's own rate and range count (the fallback's) */
    final PartitionLoad local;

    /** keys and bytes since the last report; null when the table is not ranged */
    final KeyReservoir reservoir;

    /** the coordinator's ranges for it, null until a merge has seen it */
    GlobalRanges.PartitionRanges global;

    int ranges = 1;
    int finest = 1;
    long[] boundaries = new long[0];

    /** the rows on their way to the writers, by buffer id */
    private Batch[] batches = new Batch[0];

    private final int table;
    private final int specId;

    Partition(int base, String path, boolean ranged, int table, int specId) {
      this.base = base;
      this.path = path;
      this.local = new PartitionLoad(base);
      this.reservoir = ranged ? new KeyReservoir() : null;
      this.table = table;
      this.specId = specId;
    }

    Batch batch(int bufferId) {
      if (bufferId >= batches.length) {
        batches = java.util.Arrays.copyOf(batches, bufferId + 1);
      }
      Batch batch = batches[bufferId];
      if (batch == null) {
        batch = new Batch(table, specId, bufferId);
        batches[bufferId] = batch;
      }
      return batch;
    }
  }

  /** The rows of one partition and buffer id not yet sent, as their writer buffers them. */
  private static final class Batch {
    final DataOutputSerializer rows = new DataOutputSerializer(BATCH_BYTES + 1024);
    final int table;
    final int specId;
    final int bufferId;
    int slot;

    /** rows in {@link #rows} */
    int count;

    /** in {@link #pending} */
    boolean queued;

    Batch(int table, int specId, int bufferId) {
      this.table = table;
      this.specId = specId;
      this.bufferId = bufferId;
    }
  }

  /** The per-subtask state of one table: partitions and (if ranged) the fallback key sample. */
  private final class TablePlacement {
    final int index;
    final PartitionSpec spec;
    final PartitionKey partitionKey;
    final RowDataWrapper wrapper;
    final int sortKeyField;
    final TableLayout layout;
    final KeySample sample;
    final BufferedRowSize size;
    final RowDataSerializer serializer;
    final Map<StructLike, Partition> partitions = new HashMap<>();

    /** the coordinator's ranges of this table, null until the first merge */
    GlobalRanges.TableRanges globalTable;

    TablePlacement(int index, Placement p, boolean rangeMode) {
      this.index = index;
      this.spec = p.spec();
      this.partitionKey = new PartitionKey(p.spec(), p.writeSchema());
      this.wrapper = new RowDataWrapper(p.layout().rowType(), p.writeSchema().asStruct());
      this.sortKeyField = p.layout().sortKeyField();
      this.layout = p.layout();
      boolean ranged = rangeMode && p.ranged() && sortKeyField >= 0;
      this.sample = ranged ? new KeySample() : null;
      this.size = ranged ? new BufferedRowSize(p.layout()) : null;
      this.serializer = new RowDataSerializer(p.layout().rowType());
    }

    Partition partition(RowData row) {
      partitionKey.partition(wrapper.wrap(row));
      Partition partition = partitions.get(partitionKey);
      if (partition == null) {
        partition =
            new Partition(
                31 * index + partitionKey.hashCode(),
                spec.partitionToPath(partitionKey),
                sample != null,
                index,
                spec.specId());
        if (globalTable != null) {
          partition.global = globalTable.partitions().get(partition.path);
        }
        place(partition, global, rangeCount);
        partitions.put(partitionKey.copy(), partition);
      }
      return partition;
    }

    void useGlobal(GlobalRanges ranges) {
      globalTable = index < ranges.tables().size() ? ranges.tables().get(index) : null;
      for (Partition p : partitions.values()) {
        p.global = globalTable == null ? null : globalTable.partitions().get(p.path);
      }
    }

    /**
     * The count and boundaries {@code p}'s rows are placed by: the coordinator's for it; else its
     * own count cut from the table's global quantiles; else (no merge yet) the fallback.
     */
    void place(Partition p, GlobalRanges ranges, RangeCount count) {
      if (sample == null) {
        p.ranges = 1;
        p.finest = 1;
        p.boundaries = new long[0];
      } else if (p.global != null) {
        p.finest = ranges.finest();
        p.ranges = p.global.ranges();
        p.boundaries = p.global.boundaries();
      } else if (globalTable != null && globalTable.quantiles().length > 0) {
        p.finest = ranges.finest();
        p.ranges = Math.min(p.local.ranges, p.finest);
        p.boundaries = Quantiles.cut(globalTable.quantiles(), p.ranges, settings.writers());
      } else {
        p.finest = count.finest();
        p.ranges = p.local.ranges;
        p.boundaries = sample.boundaries(p.ranges);
      }
    }

    long measure(RowData row) {
      try {
        return size.measure(row);
      } catch (IOException e) {
        throw new UncheckedIOException("measuring a row", e);
      }
    }

    void refresh(double seconds, int subtasks, RangeCount count, GlobalRanges ranges) {
      if (sample != null) {
        sample.refresh();
      }
      long now = System.currentTimeMillis();
      for (Iterator<Partition> it = partitions.values().iterator(); it.hasNext(); ) {
        Partition p = it.next();
        long newestAge = p.local.newestAgeMillis(now);
        double bytesPerSecond = p.local.closeWindow(seconds) * subtasks;
        if (p.local.idle() && (p.reservoir == null || p.reservoir.isEmpty())) {
          for (Batch batch : p.batches) {
            if (batch != null) {
              send(batch);
            }
          }
          it.remove();
        } else if (sample != null) {
          p.local.propose(count.ranges(bytesPerSecond, newestAge));
          place(p, ranges, count);
        }
      }
    }
  }
}
