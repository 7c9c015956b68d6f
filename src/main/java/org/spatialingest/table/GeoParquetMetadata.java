package org.spatialingest.table;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.TreeSet;
import org.apache.flink.table.data.RowData;

/**
 * GeoParquet 1.1 file metadata (the {@code geo} key of the Parquet footer) for the telemetry
 * table's files: primary column {@code geometry}, WKB, the geometry types and the bbox of the
 * file's rows, and the {@code bbox} struct column as the bbox covering. No {@code crs} key: the
 * spec's default for a missing one is OGC:CRS84 (longitude, latitude on WGS84), which is what the
 * geometry column holds. Planar edges (the default), so no {@code edges} key either.
 *
 * @see <a href="https://geoparquet.org/releases/v1.1.0/">GeoParquet 1.1.0</a>
 */
public final class GeoParquetMetadata implements FileMetadata {
  /** The footer key GeoParquet readers look for. */
  public static final String KEY = "geo";

  public static final String VERSION = "1.1.0";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String geometryColumn;
  private final int geometryTypeField;
  private final String bboxColumn;
  private final int bboxField;

  /**
   * @param geometryColumn the WKB column's name
   * @param geometryTypeField position of the string field holding each row's JTS geometry type
   * @param bboxColumn the bbox struct column's name (fields xmin, ymin, xmax, ymax)
   * @param bboxField its position
   */
  public GeoParquetMetadata(
      String geometryColumn, int geometryTypeField, String bboxColumn, int bboxField) {
    this.geometryColumn = geometryColumn;
    this.geometryTypeField = geometryTypeField;
    this.bboxColumn = bboxColumn;
    this.bboxField = bboxField;
  }

  @Override
  public Summary summary() {
    return new GeoSummary();
  }

  /**
   * The GeoParquet name of a JTS geometry type (2D): JTS and GeoParquet agree except that a
   * LinearRing is written as a LineString in WKB.
   */
  static String geoParquetType(String jtsType) {
    return "LinearRing".equals(jtsType) ? "LineString" : jtsType;
  }

  private final class GeoSummary implements Summary {
    private final TreeSet<String> types = new TreeSet<>();
    private double xmin = Double.POSITIVE_INFINITY;
    private double ymin = Double.POSITIVE_INFINITY;
    private double xmax = Double.NEGATIVE_INFINITY;
    private double ymax = Double.NEGATIVE_INFINITY;
    private String lastType;

    @Override
    public void add(RowData row) {
      String type = row.getString(geometryTypeField).toString();
      if (!type.equals(lastType)) { // files are mostly one type: skip the set for runs of it
        types.add(geoParquetType(type));
        lastType = type;
      }
      RowData bbox = row.getRow(bboxField, TelemetryTable.BBOX_FIELDS);
      xmin = Math.min(xmin, bbox.getDouble(TelemetryTable.XMIN));
      ymin = Math.min(ymin, bbox.getDouble(TelemetryTable.YMIN));
      xmax = Math.max(xmax, bbox.getDouble(TelemetryTable.XMAX));
      ymax = Math.max(ymax, bbox.getDouble(TelemetryTable.YMAX));
    }

    @Override
    public Map<String, String> metadata() {
      ObjectNode column = JSON.createObjectNode();
      column.put("encoding", "WKB");
      ArrayNode typeList = column.putArray("geometry_types");
      types.forEach(typeList::add);
      if (xmin <= xmax) {
        column.putArray("bbox").add(xmin).add(ymin).add(xmax).add(ymax);
      }
      ObjectNode covering = column.putObject("covering").putObject("bbox");
      for (String field : new String[] {"xmin", "ymin", "xmax", "ymax"}) {
        covering.putArray(field).add(bboxColumn).add(field);
      }
      ObjectNode geo = JSON.createObjectNode();
      geo.put("version", VERSION);
      geo.put("primary_column", geometryColumn);
      geo.putObject("columns").set(geometryColumn, column);
      return Map.of(KEY, geo.toString());
    }
  }
}
