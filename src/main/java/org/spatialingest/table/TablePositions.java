package org.spatialingest.table;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Source positions kept in the table: every snapshot the sink commits to the primary table records,
 * per source key ({@link SourceKeys}), the position below which every record of that source is
 * committed — as a row of this table or of its rejects table. The map is complete in every snapshot
 * (not a delta), so the newest snapshot that has one is the table's truth; a start without Flink
 * state resumes from it.
 */
public final class TablePositions {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<TreeMap<String, Long>> MAP = new TypeReference<>() {};

  private TablePositions() {}

  /**
   * The positions of the newest snapshot (of the current snapshot's history) that has them; empty
   * if none.
   */
  public static Map<String, Long> read(Table table) {
    Snapshot current = table.currentSnapshot();
    return current == null ? Map.of() : readAsOf(table, current);
  }

  /** The positions of {@code snapshot} or its newest ancestor that has them; empty if none. */
  public static Map<String, Long> readAsOf(Table table, Snapshot snapshot) {
    for (Snapshot s : SnapshotUtil.ancestorsOf(snapshot.snapshotId(), table::snapshot)) {
      String encoded = s.summary().get(SnapshotSummaryKeys.POSITIONS);
      if (encoded != null) {
        return decode(encoded);
      }
    }
    return Map.of();
  }

  public static String encode(Map<String, Long> positions) {
    try {
      return JSON.writeValueAsString(new TreeMap<>(positions));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode positions", e);
    }
  }

  public static Map<String, Long> decode(String encoded) {
    try {
      return JSON.readValue(encoded, MAP);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "snapshot summary "
              + SnapshotSummaryKeys.POSITIONS
              + " is not a JSON object of "
              + "source key to position: "
              + encoded,
          e);
    }
  }
}
