package org.spatialingest.geometry;

import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.TelemetryTable;
import org.spatialingest.source.SourceRecord;

/**
 * The parallel geometry transform: parses each record with JTS and emits the table row. A record that cannot become
 * a row never fails the job: it is counted per reason ({@code rejects_<reason>}) and logged at a bounded rate.
 *
 * <p>Freshness at processing start: {@code pipelineAgeAtProcessingMs} (now − Kafka timestamp, the pipeline's ingress)
 * and {@code sourceEventAgeAtProcessingMs} (now − {@code event_time} from the payload).
 */
public class TelemetryTransform extends ProcessFunction<SourceRecord, RowData> {
  private static final Logger LOG = LoggerFactory.getLogger(TelemetryTransform.class);
  private static final long LOG_INTERVAL_MS = 10_000;
  /** values each age histogram keeps (Flink's reporters read quantiles over this window) */
  private static final int AGE_WINDOW = 4096;

  private final HilbertCurve hilbert;
  private transient TelemetryParser parser;
  private transient Map<RejectReason, Counter> rejects;
  private transient Counter parsed;
  private transient Histogram pipelineAge;
  private transient Histogram sourceEventAge;
  private transient long lastLogMillis;
  private transient long suppressed;

  public TelemetryTransform(HilbertCurve hilbert) {
    this.hilbert = hilbert;
  }

  @Override
  public void open(OpenContext openContext) {
    parser = new TelemetryParser(hilbert);
    MetricGroup group = getRuntimeContext().getMetricGroup();
    parsed = group.counter("recordsParsed");
    // the two ages are kept apart: replayed data with old event times must not look like a slow pipeline
    pipelineAge = group.histogram("pipelineAgeAtProcessingMs", new DescriptiveStatisticsHistogram(AGE_WINDOW));
    sourceEventAge = group.histogram("sourceEventAgeAtProcessingMs",
        new DescriptiveStatisticsHistogram(AGE_WINDOW));
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
    try {
      GenericRowData row = parser.parse(record.value, record.timestamp);
      sourceEventAge.update(now - row.getTimestamp(TelemetryTable.EVENT_TIME, 6).getMillisecond());
      out.collect(row);
      parsed.inc();
    } catch (GeometryParseException e) {
      rejects.get(e.reason()).inc();
      logRejected(record, e);
    }
  }

  private void logRejected(SourceRecord record, GeometryParseException e) {
    long now = System.currentTimeMillis();
    if (now - lastLogMillis >= LOG_INTERVAL_MS) {
      LOG.warn("Rejected record {} ({}): {}{}", record.origin(), e.reason().code(), e.getMessage(),
          suppressed > 0 ? " [" + suppressed + " more rejects not logged since the last line]" : "");
      lastLogMillis = now;
      suppressed = 0;
    } else {
      suppressed++;
    }
  }
}
