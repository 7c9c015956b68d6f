package org.spatialingest.geometry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.Collector;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.geom.Point;
import org.locationtech.jts.geom.prep.PreparedGeometry;
import org.locationtech.jts.geom.prep.PreparedGeometryFactory;
import org.locationtech.jts.index.strtree.STRtree;
import org.locationtech.jts.io.ParseException;
import org.locationtech.jts.io.WKBReader;
import org.spatialingest.table.TelemetryTable;

/**
 * Sets the {@code region} column: the named reference region (from boundary refreshes, held in
 * Flink broadcast state) that contains the row's bbox centre — for a point, the point itself.
 * Lookup: an {@link STRtree} over {@link PreparedGeometry} regions, rebuilt (per subtask, not in
 * state) after a refresh changed the state or after a restore. A refresh replaces its region with
 * one state put, so a lookup sees the old polygon or the new one, never a mix; a refresh with an
 * older event time than the region's current one is ignored. Where regions overlap, the
 * lexicographically smallest name wins (independent of arrival order). Refreshes and rows travel on
 * different inputs, so a row that arrives just after a refresh may still see the previous polygon.
 */
public class RegionEnrichment extends BroadcastProcessFunction<RowData, RegionRefresh, RowData> {
  public static final MapStateDescriptor<String, RegionRefresh> REGIONS =
      new MapStateDescriptor<>("regions", Types.STRING, TypeInformation.of(RegionRefresh.class));

  private final RowType rowType;

  /** regions known before the stream's first refresh ({@code regions.bootstrap}), by name */
  private final Map<String, RegionRefresh> bootstrap;

  private transient RowData.FieldGetter[] getters;
  private transient Index index;
  private transient Counter matched;
  private transient GeometryFactory factory;

  public RegionEnrichment(RowType rowType) {
    this(rowType, List.of());
  }

  /** With regions to start from: the newest refresh per region of {@code bootstrap}. */
  public RegionEnrichment(RowType rowType, List<RegionRefresh> bootstrap) {
    this.rowType = rowType;
    this.bootstrap = new HashMap<>();
    for (RegionRefresh r : bootstrap) {
      this.bootstrap.merge(r.name, r, (a, b) -> a.eventMillis >= b.eventMillis ? a : b);
    }
  }

  @Override
  public void open(OpenContext openContext) {
    getters = new RowData.FieldGetter[rowType.getFieldCount()];
    for (int i = 0; i < getters.length; i++) {
      getters[i] = RowData.createFieldGetter(rowType.getTypeAt(i), i);
    }
    factory = new GeometryFactory();
    matched = getRuntimeContext().getMetricGroup().counter("regionMatched");
  }

  @Override
  public void processElement(RowData row, ReadOnlyContext ctx, Collector<RowData> out)
      throws Exception {
    if (index == null) {
      Map<String, RegionRefresh> regions = new HashMap<>(bootstrap);
      for (Map.Entry<String, RegionRefresh> e : ctx.getBroadcastState(REGIONS).immutableEntries()) {
        regions.merge(
            e.getKey(),
            e.getValue(),
            (boot, streamed) -> streamed.eventMillis >= boot.eventMillis ? streamed : boot);
      }
      index = Index.build(regions.entrySet(), factory);
    }
    RowData bbox = row.getRow(TelemetryTable.BBOX, TelemetryTable.BBOX_FIELDS);
    double x = (bbox.getDouble(TelemetryTable.XMIN) + bbox.getDouble(TelemetryTable.XMAX)) / 2;
    double y = (bbox.getDouble(TelemetryTable.YMIN) + bbox.getDouble(TelemetryTable.YMAX)) / 2;
    String region = index.regionOf(x, y);
    GenericRowData copy = new GenericRowData(row.getRowKind(), getters.length);
    for (int i = 0; i < getters.length; i++) {
      copy.setField(i, getters[i].getFieldOrNull(row));
    }
    copy.setField(TelemetryTable.REGION, region == null ? null : StringData.fromString(region));
    if (region != null) {
      matched.inc();
    }
    out.collect(copy);
  }

  @Override
  public void processBroadcastElement(RegionRefresh refresh, Context ctx, Collector<RowData> out)
      throws Exception {
    BroadcastState<String, RegionRefresh> state = ctx.getBroadcastState(REGIONS);
    RegionRefresh current = state.get(refresh.name);
    if (current == null || current.eventMillis <= refresh.eventMillis) {
      state.put(refresh.name, refresh);
      index = null; // rebuilt on the next row
    }
  }

  /** Prepared regions in an STRtree; immutable once built. */
  static final class Index {
    private final STRtree tree = new STRtree();
    private final GeometryFactory factory;
    private final int size;

    private Index(GeometryFactory factory, int size) {
      this.factory = factory;
      this.size = size;
    }

    static Index build(Iterable<Map.Entry<String, RegionRefresh>> regions, GeometryFactory factory)
        throws ParseException {
      WKBReader reader = new WKBReader(factory);
      List<Object[]> entries = new ArrayList<>();
      for (Map.Entry<String, RegionRefresh> e : regions) {
        Geometry g = reader.read(e.getValue().wkb);
        entries.add(new Object[] {e.getKey(), PreparedGeometryFactory.prepare(g)});
      }
      Index index = new Index(factory, entries.size());
      for (Object[] entry : entries) {
        Envelope env = ((PreparedGeometry) entry[1]).getGeometry().getEnvelopeInternal();
        index.tree.insert(env, entry);
      }
      index.tree.build();
      return index;
    }

    String regionOf(double x, double y) {
      if (size == 0) {
        return null;
      }
      Point p = factory.createPoint(new Coordinate(x, y));
      String best = null;
      for (Object o : tree.query(new Envelope(x, x, y, y))) {
        Object[] entry = (Object[]) o;
        String name = (String) entry[0];
        if ((best == null || name.compareTo(best) < 0) && ((PreparedGeometry) entry[1]).covers(p)) {
          best = name;
        }
      }
      return best;
    }
  }
}
