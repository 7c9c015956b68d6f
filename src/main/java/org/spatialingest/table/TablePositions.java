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
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;

/**
 * Source positions kept in the table, and the one owner of their format in the snapshot summary:
 * every snapshot a sink commits to the primary table records, per Kafka partition it reads, the
 * offset below which every record of that partition is committed, as a row of this table or of its
 * rejects table. The record is complete for that sink in every snapshot (not a delta), so the
 * newest snapshot of a sink that has one is that sink's truth; a start without Flink state resumes
 * from it.
 *
 * <p>Format 3 ({@link SnapshotSummaryKeys#POSITIONS_FORMAT} {@code = 3}), written by this release:
 * {@code {"sink":"<sink.id>","kafka-cluster":"<cluster id>","kafka":{"<topic>":{"id":"<topic
 * id>","offsets":[<offset of partition 0>, ...]}},"file-sources":N}} ({@code -1}: no position for
 * that partition). A snapshot holds the positions of the sink that committed it only; other sinks'
 * positions stay in their own snapshots, each kept reachable by the sink's tag {@link #tagName}
 * (moved in the same transaction as each of its commits; snapshot expiry keeps tagged snapshots).
 * The ids ({@link KafkaIds}) make positions apply only to the cluster and topic they were taken
 * from.
 *
 * <p>Format 2 (releases before it): {@code {"kafka":{"<topic>":[offsets...]},"file-sources":N}};
 * format 1 (no format key): a JSON object of source key to position. Both are still read, as the
 * positions of any sink with unknown ids (an older release had one sink per table), never written.
 * File sources are not listed one by one: the rows and rejects name their file and line, so the
 * tables themselves are the exact record ({@link CommittedRecords}).
 */
@PublicEvolving
public final class TablePositions {
  /** the format this release writes */
  public static final int FORMAT = 3;

  /** what every sink's positions tag starts with; followed by the sink id */
  public static final String TAG_PREFIX = "spatial-ingest-positions-";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<TreeMap<String, Long>> MAP = new TypeReference<>() {};
  private static final String SINK = "sink";
  private static final String CLUSTER = "kafka-cluster";
  private static final String KAFKA = "kafka";
  private static final String ID = "id";
  private static final String OFFSETS = "offsets";
  private static final String FILE_SOURCES = "file-sources";

  private TablePositions() {}

  /** The tag that marks the sink's newest commit of positions. */
  public static String tagName(String sinkId) {
    return TAG_PREFIX + sinkId;
  }

  /**
   * The Kafka positions of the newest snapshot (of the current snapshot's history) that has any;
   * empty if none. For tools and tests of one sink; a job reads its own with {@link #readSink}.
   */
  public static Map<String, Long> read(Table table) {
    Snapshot current = table.currentSnapshot();
    return current == null ? Map.of() : readAsOf(table, current);
  }

  /** The Kafka positions of {@code snapshot} or its newest ancestor that has any; empty if none. */
  public static Map<String, Long> readAsOf(Table table, Snapshot snapshot) {
    for (Snapshot s : SinkHistory.from(table, snapshot)) {
      SinkPositions p = fromSummary(s.summary(), s.snapshotId());
      if (p != null) {
        return p.offsets();
      }
    }
    return Map.of();
  }

  /** The newest positions of sink {@code sinkId} as of the table's current snapshot. */
  public static Optional<SinkPositions> readSink(Table table, String sinkId) {
    Snapshot current = table.currentSnapshot();
    return current == null ? Optional.empty() : readSink(table, sinkId, current);
  }

  /**
   * The newest positions of sink {@code sinkId} as of {@code asOf}: of the newest snapshot in its
   * history that has this sink's positions (or positions of formats 1 and 2); when that history
   * ends in an expired snapshot first, the positions of the sink's tag, if the tagged snapshot is
   * not newer than {@code asOf}. Empty when neither has any.
   */
  public static Optional<SinkPositions> readSink(Table table, String sinkId, Snapshot asOf) {
    SinkHistory.Window walk = SinkHistory.from(table, asOf);
    for (Snapshot s : walk) {
      SinkPositions p = fromSummary(s.summary(), s.snapshotId());
      if (p != null && p.ofSink(sinkId)) {
        return Optional.of(p);
      }
    }
    if (walk.cutByExpiry()) {
      Snapshot tagged = taggedSnapshot(table, sinkId);
      if (tagged != null && tagged.sequenceNumber() <= asOf.sequenceNumber()) {
        SinkPositions p = fromSummary(tagged.summary(), tagged.snapshotId());
        if (p != null && p.ofSink(sinkId)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  /** The snapshot the sink's tag marks, or null when there is none (or it is gone). */
  public static Snapshot taggedSnapshot(Table table, String sinkId) {
    SnapshotRef ref = table.refs().get(tagName(sinkId));
    return ref == null ? null : table.snapshot(ref.snapshotId());
  }

  /**
   * Whether {@code snapshotId} is in the history of the table's current snapshot. A walk that meets
   * it says yes; one that meets an older snapshot (by sequence number) first, or ends at the first
   * snapshot (a rollback, a {@code CREATE OR REPLACE}), says no; one that ends in an expired
   * snapshot first cannot tell and says yes (expiry removes history, a rollback does not).
   */
  public static boolean isInHistory(Table table, long snapshotId) {
    Snapshot target = table.snapshot(snapshotId);
    Snapshot current = table.currentSnapshot();
    if (target == null || current == null) {
      return target == null && current == null;
    }
    SinkHistory.Window walk = SinkHistory.from(table, current);
    for (Snapshot s : walk) {
      if (s.snapshotId() == snapshotId) {
        return true;
      }
      if (s.sequenceNumber() < target.sequenceNumber()) {
        return false;
      }
    }
    return walk.cutByExpiry();
  }

  /** Attempts of {@link #commitWithTag} when another writer commits at the same time. */
  static final int TAG_COMMIT_ATTEMPTS = 10;

  /**
   * Commits, in one transaction, what {@code update} adds to it and the sink's tag moved to the
   * snapshot it made ({@link #moveTag}). Iceberg's transaction retries its snapshot updates after a
   * concurrent commit but not a tag update (it fails with "Table metadata refresh is required":
   * found with table maintenance committing next to the sink), so a conflict retries the whole
   * transaction here, on the refreshed table: {@code update} runs again and must check again what
   * it depends on.
   */
  public static void commitWithTag(
      Table table, String sinkId, java.util.function.Consumer<Transaction> update) {
    for (int attempt = 1; ; attempt++) {
      Transaction tx = table.newTransaction();
      update.accept(tx);
      moveTag(tx, sinkId);
      try {
        tx.commitTransaction();
        return;
      } catch (org.apache.iceberg.exceptions.CommitFailedException e) {
        if (attempt >= TAG_COMMIT_ATTEMPTS) {
          throw e;
        }
        try {
          Thread.sleep(50L * attempt);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
        table.refresh();
      }
    }
  }

  /**
   * Moves (or creates) the sink's tag to the snapshot the transaction's last update made, so it is
   * part of the same commit.
   */
  public static void moveTag(Transaction tx, String sinkId) {
    long id = tx.table().currentSnapshot().snapshotId();
    String tag = tagName(sinkId);
    if (tx.table().refs().containsKey(tag)) {
      tx.manageSnapshots().replaceTag(tag, id).commit();
    } else {
      tx.manageSnapshots().createTag(tag, id).commit();
    }
  }

  /**
   * The summary entries (positions and format) that record {@code positions} of sink {@code
   * sinkId}, keyed by source key ({@link SourceKeys}), taken from the Kafka {@code ids}; file keys
   * are counted only.
   */
  public static Map<String, String> summary(
      String sinkId, KafkaIds ids, Map<String, Long> positions) {
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
    root.put(SINK, sinkId);
    if (ids.clusterId() != null) {
      root.put(CLUSTER, ids.clusterId());
    }
    ObjectNode kafka = root.putObject(KAFKA);
    byTopic.forEach(
        (topic, partitions) -> {
          long[] offsets = new long[partitions.lastKey() + 1];
          Arrays.fill(offsets, -1);
          partitions.forEach((p, offset) -> offsets[p] = offset);
          ObjectNode t = kafka.putObject(topic);
          if (ids.topicId(topic) != null) {
            t.put(ID, ids.topicId(topic));
          }
          ArrayNode array = t.putArray(OFFSETS);
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
   * The positions entries of {@code summary} as they are (to carry them over to a new snapshot).
   */
  public static Map<String, String> entries(Map<String, String> summary) {
    Map<String, String> entries = new LinkedHashMap<>();
    for (String key :
        new String[] {SnapshotSummaryKeys.POSITIONS_FORMAT, SnapshotSummaryKeys.POSITIONS}) {
      if (summary.containsKey(key)) {
        entries.put(key, summary.get(key));
      }
    }
    return entries;
  }

  /**
   * The positions a snapshot summary records, in any format this release reads; null when it has
   * none. File keys of format 1 are left out.
   */
  public static SinkPositions fromSummary(Map<String, String> summary, long snapshotId) {
    String encoded = summary.get(SnapshotSummaryKeys.POSITIONS);
    if (encoded == null) {
      return null;
    }
    String format = summary.get(SnapshotSummaryKeys.POSITIONS_FORMAT);
    if (format == null) {
      Map<String, Long> positions = new HashMap<>(decode(encoded));
      positions.keySet().removeIf(SourceKeys::isFile);
      return new SinkPositions(null, KafkaIds.unknown(), positions, snapshotId);
    }
    if (!format.equals("2") && !format.equals(Integer.toString(FORMAT))) {
      throw new IllegalStateException(
          "snapshot summary "
              + SnapshotSummaryKeys.POSITIONS_FORMAT
              + " is "
              + format
              + ": written by a newer release of spatial-ingest; this one reads formats 1 to "
              + FORMAT);
    }
    try {
      JsonNode root = JSON.readTree(encoded);
      Map<String, Long> positions = new HashMap<>();
      Map<String, String> topicIds = new HashMap<>();
      for (Map.Entry<String, JsonNode> topic : root.path(KAFKA).properties()) {
        JsonNode offsets = topic.getValue();
        if (offsets.isObject()) { // format 3
          if (offsets.hasNonNull(ID)) {
            topicIds.put(topic.getKey(), offsets.get(ID).asText());
          }
          offsets = offsets.path(OFFSETS);
        }
        for (int p = 0; p < offsets.size(); p++) {
          long offset = offsets.get(p).asLong(-1);
          if (offset >= 0) {
            positions.put(SourceKeys.kafka(topic.getKey(), p), offset);
          }
        }
      }
      String sink = root.hasNonNull(SINK) ? root.get(SINK).asText() : null;
      String cluster = root.hasNonNull(CLUSTER) ? root.get(CLUSTER).asText() : null;
      return new SinkPositions(sink, new KafkaIds(cluster, topicIds), positions, snapshotId);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "snapshot summary "
              + SnapshotSummaryKeys.POSITIONS
              + " is not format "
              + format
              + ": "
              + encoded,
          e);
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
