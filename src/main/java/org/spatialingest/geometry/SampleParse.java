package org.spatialingest.geometry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.table.data.GenericRowData;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.TelemetryTable;

/**
 * A sample of input records parsed exactly as the job parses them ({@link TelemetryParser} of the
 * job's configuration), for {@code plan --sample/--topic} and for the first key ranges of a bounded
 * input ({@link BoundedInputSample}). Records that do not parse are counted per reject reason,
 * never silently dropped. Cost: one parse per record.
 */
public final class SampleParse {
  private SampleParse() {}

  /**
   * The records of a sample parsed as the job parses them.
   *
   * @param rows the telemetry-table rows of the records that parse (without source columns)
   * @param rejectsByReason records that did not parse, by reject reason code
   * @param firstRejectByReason the first parse error message of each reason
   */
  public record Parsed(
      List<GenericRowData> rows,
      Map<String, Long> rejectsByReason,
      Map<String, String> firstRejectByReason) {}

  /**
   * Parses {@code records} with the {@link TelemetryParser} of the job configured by {@code job}; a
   * record without ingest time (from a file) gets its {@code event_time} as ingest time.
   */
  public static Parsed parse(List<RawRecord> records, JobConfig job) {
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84, job);
    List<GenericRowData> rows = new ArrayList<>(records.size());
    Map<String, Long> rejects = new TreeMap<>();
    Map<String, String> firstReject = new TreeMap<>();
    for (RawRecord record : records) {
      GenericRowData row;
      try {
        row =
            parser
                .parse(record.payload(), record.ingestMillis() == null ? 0L : record.ingestMillis())
                .row();
      } catch (RecordRejectedException e) {
        String code = e.reason().code();
        rejects.merge(code, 1L, Long::sum);
        firstReject.putIfAbsent(code, e.getMessage());
        continue;
      }
      if (record.ingestMillis() == null) {
        row.setField(TelemetryTable.INGEST_TIME, row.getField(TelemetryTable.EVENT_TIME));
      }
      rows.add(row);
    }
    return new Parsed(rows, rejects, firstReject);
  }
}
