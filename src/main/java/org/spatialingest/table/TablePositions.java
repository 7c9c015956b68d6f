package org.spatialingest.table;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Source positions kept in the table, and the one owner of their format in the snapshot summary:
 * every snapshot the sink commits to the primary table records, per Kafka partition, the offset
 * below which every record of that partition is committed, as a row of this table or of its rejects
 * table. The record is complete in every snapshot (not a delta), so the newest snapshot that has
 * one is the table's truth; a start without Flink state resumes from it.
 *
 * <p>Format 2 ({@link SnapshotSummaryKeys#POSITIONS_FORMAT} {@code = 2}), written by this release:
 * {@code {"kafka":{"<topic>":[<offset of partition 0>, <of partition 1>, ...]},"file-sources":N}},
 * one array per topic ({@code -1}: no position for that partition). File sources are not listed one
 * by one: the sink cannot tell a finished file from one it stopped reading, and the rows and
 * rejects already name their file and line, so the tables themselves are the exact record of what a
 * re-run must skip ({@link CommittedRecords}); the summary keeps only how many file sources the job
 * had read. Cost: about {@code 1 + digits} bytes per Kafka partition plus the topic names, and a
 * constant for any number of files (a topic of 1,000 partitions at 10-digit offsets: about 11 KB).
 *
 * <p>Format 1 (no format key; releases before it): a JSON object of source key ({@link SourceKeys})
 * to position, one entry per partition and per file. Still read, never written; its file entries
 * are ignored for the same reason (the tables are the record).
 */
public final class TablePositions {
  /** the format this release writes */
  public static final int FORMAT = 2;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<TreeMap<String, Long>> MAP = new TypeReference<>() {};
  private static final String KAFKA = "kafka";
  private static final String FILE_SOURCES = "file-sources";

  private TablePositions() {}

  /**
   * The Kafka positions of the newest snapshot (of the current snapshot's history) that has them;
   * empty if none.
   */
  public static Map<String, Long> read(Table table) {
    Snapshot current = table.currentSnapshot();
    return current == null ? Map.of() : readAsOf(table, current);
  }

  /**
   * The Kafka positions of {@code snapshot} or its newest ancestor that has them; empty if none.
   */
  public static Map<String, Long> readAsOf(Table table, Snapshot snapshot) {
    for (Snapshot s : SnapshotUtil.ancestorsOf(snapshot.snapshotId(), table::snapshot)) {
      Map<String, String> summary = s.summary();
      if (summary.containsKey(SnapshotSummaryKeys.POSITIONS)) {
        return fromSummary(summary);
      }
    }
    return Map.of();
  }

  /**
   * The summary entries (positions and format) that record {@code positions}, keyed by source key
   * ({@link SourceKeys}); file keys are counted only.
   */
  public static Map<String, String> summary(Map<String, Long> positions) {
    Map<String, TreeMap<Integer, Long>> byTopic = new TreeMap<>();
    int files = 0;
    for (Map.Entry<String, Long> e : positions.entrySet()) {
      String key = e.getKey();
      if (SourceKeys.isFile(key)) {
        files++;
      } else {
        byTopic
            .computeIfAbsent(SourceKeys.topic(key), t -> new TreeMap<>())
            .put(SourceKeys.partition(key), e.getValue());
      }
    }
    ObjectNode root = JSON.createObjectNode();
    ObjectNode kafka = root.putObject(KAFKA);
    byTopic.forEach(
        (topic, partitions) -> {
          long[] offsets = new long[partitions.lastKey() + 1];
          Arrays.fill(offsets, -1);
          partitions.forEach((p, offset) -> offsets[p] = offset);
          ArrayNode array = kafka.putArray(topic);
          for (long offset : offsets) {
            array.add(offset);
          }
        });
    root.put(FILE_SOURCES, files);
    Map<String, String> entries = new LinkedHashMap<>();
    entries.put(SnapshotSummaryKeys.POSITIONS_FORMAT, Integer.toString(FORMAT));
    entries.put(SnapshotSummaryKeys.POSITIONS, root.toString());
    return entries;
  }

  /**
   * The Kafka positions a snapshot summary records, in either format; file keys of format 1 are
   * left out.
   */
  public static Map<String, Long> fromSummary(Map<String, String> summary) {
    String encoded = summary.get(SnapshotSummaryKeys.POSITIONS);
    if (encoded == null) {
      return Map.of();
    }
    String format = summary.get(SnapshotSummaryKeys.POSITIONS_FORMAT);
    if (format == null) {
      Map<String, Long> positions = new HashMap<>(decode(encoded));
      positions.keySet().removeIf(SourceKeys::isFile);
      return positions;
    }
    if (!format.equals(Integer.toString(FORMAT))) {
      throw new IllegalStateException(
          "snapshot summary "
              + SnapshotSummaryKeys.POSITIONS_FORMAT
              + " is "
              + format
              + ": written by a newer release of spatial-ingest; this one reads formats 1 and "
              + FORMAT);
    }
    try {
      Map<String, Long> positions = new HashMap<>();
      JsonNode kafka = JSON.readTree(encoded).path(KAFKA);
      for (Map.Entry<String, JsonNode> topic : kafka.properties()) {
        JsonNode offsets = topic.getValue();
        for (int p = 0; p < offsets.size(); p++) {
          long offset = offsets.get(p).asLong(-1);
          if (offset >= 0) {
            positions.put(SourceKeys.kafka(topic.getKey(), p), offset);
          }
        }
      }
      return positions;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "snapshot summary " + SnapshotSummaryKeys.POSITIONS + " is not format 2: " + encoded, e);
    }
  }

  /**
   * Format 1 (and the aggregator state of releases before {@code AggregatorState}): a JSON object
   * of source key to position. Read only.
   */
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
