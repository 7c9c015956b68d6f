package org.spatialingest.geometry;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.locationtech.jts.geom.GeometryFactory;
import org.spatialingest.config.InputConfig;
import org.spatialingest.config.InputConfig.InputFormat;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.RegionsConfig;
import org.spatialingest.config.TransformConfig;

/**
 * Turns one telemetry record into a table row, or says why it cannot (a {@link
 * RecordRejectedException} with a {@link RejectReason}). The whole transform chain, in order:
 * {@link RecordReader} (size cap, the record's JSON, id, event time); {@link GeometryDecoder} (the
 * geometry per {@code input.format}, vertex cap, emptiness, finiteness); {@link GeometryChain}
 * (reproject, range, validate/repair, simplify); {@link RowAssembler} (typed properties, region
 * refresh, bbox, Hilbert key, 2D WKB).
 *
 * <p>Record contract: exactly one JSON object (JSON whitespace around it is fine, anything else
 * after it is {@code malformed_json}) with {@code id} (non-empty string), {@code event_time}
 * (ISO-8601 with offset, or epoch millis, within {@link EventTime#RANGE}), {@code geometry}
 * (encoded per {@code input.format}; another encoding is rejected with the format that would read
 * it, see {@link FormatHint}) and an optional {@code properties} object; for {@code feature} a
 * GeoJSON Feature with {@code id} (string or number) and {@code properties.event_time}. Geometry
 * work is bounded per record by {@link GeometryBudget}. Not thread-safe: one per operator.
 */
public final class TelemetryParser {
  private final RecordReader records;
  private final GeometryDecoder geometries;
  private final GeometryChain chain;
  private final RowAssembler rows;

  /**
   * The defaults of every key: GeoJSON (or WKT) input, validate and repair on, no reprojection or
   * simplification.
   */
  public TelemetryParser(HilbertCurve hilbert) {
    this(hilbert, JobConfig.defaults());
  }

  public TelemetryParser(HilbertCurve hilbert, JobConfig config) {
    this(hilbert, config.input(), config.transform(), config.regions());
  }

  public TelemetryParser(
      HilbertCurve hilbert, InputConfig input, TransformConfig transform, RegionsConfig regions) {
    // coordinates and double properties: FastDoubleParser, exact like Double.parseDouble and
    // several times faster
    ObjectMapper mapper =
        new ObjectMapper(
            JsonFactory.builder().enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER).build());
    boolean feature = input.format() == InputFormat.FEATURE;
    this.records =
        new RecordReader(
            mapper,
            input.format(),
            transform.maxRecordBytes(),
            input.typedProperties().isEmpty() && !regions.enabled());
    this.geometries =
        new GeometryDecoder(input.format(), new GeometryFactory(), transform.maxVertices());
    this.chain = new GeometryChain(transform);
    this.rows = new RowAssembler(mapper, hilbert, input.typedProperties(), feature, regions);
  }

  /**
   * The row for {@code payload}, with {@code ingestMillis} (the Kafka timestamp) as ingest time.
   */
  public ParsedRow parse(byte[] payload, long ingestMillis) throws RecordRejectedException {
    TelemetryRecord record = records.read(payload);
    GeometryChain.Result geometry = chain.apply(geometries.decode(record));
    return rows.assemble(record, geometry, ingestMillis);
  }
}
