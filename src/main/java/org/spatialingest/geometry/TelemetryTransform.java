package org.spatialingest.geometry;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.InputConfig;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.RegionsConfig;
import org.spatialingest.config.TransformConfig;
import org.spatialingest.source.SourceRecord;
import org.spatialingest.table.RejectsTable;
import org.spatialingest.table.TelemetryTable;

/**
 * The parallel geometry transform: runs the {@link TelemetryParser} chain on each record and emits
 * the table row. A record that cannot become a row never fails the job: it goes to the {@link
 * #REJECTS} side output (a rejects-table row: raw bytes, origin, reason, message), is counted per
 * reason ({@code rejects_<reason>}) and logged at a bounded rate. Boundary refreshes ({@code
 * regions.refresh-kind}) are rows like any other and also go to {@link #REFRESHES}.
 *
 * <p>Freshness at processing start: {@code pipelineAgeAtProcessingMs} (now − Kafka timestamp, the
 * pipeline's ingress) and {@code sourceEventAgeAtProcessingMs} (now − {@code event_time} from the
 * payload), kept apart so replayed data with old event times does not look like a slow pipeline.
 */
public class TelemetryTransform extends ProcessFunction<SourceRecord, RowData> {
  /** Rows of {@link RejectsTable}. */
  public static final OutputTag<RowData> REJECTS =
      new OutputTag<>("rejects", InternalTypeInfo.of(RejectsTable.ROW_TYPE));

  public static final OutputTag<RegionRefresh> REFRESHES =
      new OutputTag<>("region-refreshes", TypeInformation.of(RegionRefresh.class));

  private static final Logger LOG = LoggerFactory.getLogger(TelemetryTransform.class);
  private static final long LOG_INTERVAL_MS = 10_000;
  private static final int MAX_MESSAGE_CHARS = 1_000;

  /** values each age histogram keeps (Flink's reporters read quantiles over this window) */
  private static final int AGE_WINDOW = 4096;

  private final HilbertCurve hilbert;
  private final InputConfig input;
  private final TransformConfig transform;
  private final RegionsConfig regions;
  private transient String lastSource;
  private transient StringData lastSourceKey;
  private transient TelemetryParser parser;
  private transient Map<RejectReason, Counter> rejects;
  private transient Counter parsed;
  private transient Counter repaired;
  private transient Counter simplified;
  private transient Counter refreshes;
  private transient Histogram pipelineAge;
  private transient Histogram sourceEventAge;
  private transient long lastLogMillis;
  private transient long suppressed;

  public TelemetryTransform(HilbertCurve hilbert, JobConfig config) {
    this.hilbert = hilbert;
    this.input = config.input();
    this.transform = config.transform();
    this.regions = config.regions();
  }

  @Override
  public void open(OpenContext openContext) {
    parser = new TelemetryParser(hilbert, input, transform, regions);
    MetricGroup group = getRuntimeContext().getMetricGroup();
    parsed = group.counter("recordsParsed");
    repaired = group.counter("repaired");
    simplified = group.counter("simplified");
    refreshes = group.counter("regionRefreshes");
    pipelineAge =
        group.histogram(
            "pipelineAgeAtProcessingMs", new DescriptiveStatisticsHistogram(AGE_WINDOW));
    sourceEventAge =
        group.histogram(
            "sourceEventAgeAtProcessingMs", new DescriptiveStatisticsHistogram(AGE_WINDOW));
    rejects = new EnumMap<>(RejectReason.class);
    for (RejectReason reason : RejectReason.values()) {
      rejects.put(reason, group.counter("rejects_" + reason.code()));
    }
    lastLogMillis = Long.MIN_VALUE / 2;
  }

  @Override
  public void processElement(SourceRecord record, Context ctx, Collector<RowData> out) {
    long now = System.currentTimeMillis();
    pipelineAge.update(now - record.timestamp);
    ParsedRow parsedRow;
    GenericRowData row;
    try {
      parsedRow = parser.parse(record.value, record.timestamp);
      row = parsedRow.row();
      if (record.source != null) {
        // where the row came from: the sink records, per source, the position below which
        // everything is committed
        row.setField(TelemetryTable.SOURCE, sourceKey(record.source));
        row.setField(TelemetryTable.SOURCE_OFFSET, record.position());
      }
      sourceEventAge.update(now - parsedRow.eventMillis());
    } catch (RecordRejectedException e) {
      reject(record, e.reason(), e.getMessage(), ctx);
      return;
    } catch (RuntimeException e) {
      // a bug or a JTS corner case must not restart the job: the record is kept, with the exception
      // as its message
      reject(record, RejectReason.UNPARSEABLE_GEOMETRY, "unexpected " + e, ctx);
      return;
    }
    out.collect(row);
    parsed.inc();
    if (parsedRow.repaired()) {
      repaired.inc();
    }
    if (parsedRow.simplified()) {
      simplified.inc();
    }
    String region = parsedRow.refreshRegion();
    if (region != null) {
      ctx.output(
          REFRESHES,
          new RegionRefresh(
              region, (byte[]) row.getField(TelemetryTable.GEOMETRY), parsedRow.eventMillis()));
      refreshes.inc();
    }
  }

  /**
   * One immutable string value per source (the source hands out one key instance per partition or
   * file).
   */
  private StringData sourceKey(String source) {
    if (source != lastSource) {
      lastSource = source;
      lastSourceKey = StringData.fromString(source);
      lastSourceKey.hashCode(); // encodes once; later rows share the bytes
    }
    return lastSourceKey;
  }

  private void reject(SourceRecord record, RejectReason reason, String message, Context ctx) {
    rejects.get(reason).inc();
    ctx.output(
        REJECTS,
        rejectRow(record, reason, message, transform.maxRecordBytes(), System.currentTimeMillis()));
    logRejected(record, reason, message);
  }

  /**
   * The rejects-table row for a record; raw bytes longer than {@code maxRawBytes} are cut to it.
   */
  public static GenericRowData rejectRow(
      SourceRecord record, RejectReason reason, String message, long maxRawBytes, long nowMillis) {
    byte[] value = record.value == null ? new byte[0] : record.value;
    GenericRowData r = new GenericRowData(RejectsTable.FIELD_COUNT);
    r.setField(
        RejectsTable.RAW,
        value.length > maxRawBytes ? Arrays.copyOf(value, (int) maxRawBytes) : value);
    r.setField(RejectsTable.RAW_SIZE, (long) value.length);
    r.setField(RejectsTable.REASON, StringData.fromString(reason.code()));
    r.setField(
        RejectsTable.MESSAGE,
        message == null
            ? null
            : StringData.fromString(
                message.length() <= MAX_MESSAGE_CHARS
                    ? message
                    : message.substring(0, MAX_MESSAGE_CHARS - 3) + "..."));
    if (record.topic != null) {
      r.setField(RejectsTable.TOPIC, StringData.fromString(record.topic));
      r.setField(RejectsTable.PARTITION, record.partition);
      r.setField(RejectsTable.OFFSET, record.offset);
    }
    if (record.file != null) {
      r.setField(RejectsTable.FILE, StringData.fromString(record.file));
      r.setField(RejectsTable.LINE, record.line);
    }
    r.setField(RejectsTable.INGEST_TIME, TimestampData.fromEpochMillis(record.timestamp));
    r.setField(RejectsTable.REJECTED_AT, TimestampData.fromEpochMillis(nowMillis));
    return r;
  }

  private void logRejected(SourceRecord record, RejectReason reason, String message) {
    long now = System.currentTimeMillis();
    if (now - lastLogMillis >= LOG_INTERVAL_MS) {
      LOG.warn(
          "Rejected record {} ({}): {}{}",
          record.origin(),
          reason.code(),
          message,
          suppressed > 0
              ? " [" + suppressed + " more rejects not logged since the last line]"
              : "");
      lastLogMillis = now;
      suppressed = 0;
    } else {
      suppressed++;
    }
  }
}
