package org.spatialingest.table;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Which committed rows belong to a topic's current incarnation: a topic deleted and created again
 * under its name repeats its offsets, and its rows carry only the name ({@code
 * <topic>/<partition>}). The table knows which incarnation each commit read: every sink commit
 * records its topic ids with its positions ({@link SinkPositions#ids}). Walking back from the
 * snapshot a start reads, the newest commit that names another id for the topic ends the current
 * incarnation's history; a data file belongs to the current incarnation if its data sequence number
 * is above that commit's (data sequence numbers survive a compaction's rewrite). A reject belongs
 * to it if it was rejected after that commit. When no commit names another id (the topic was never
 * created again, or that history is expired), every row counts, as before; positions of formats 1
 * and 2 name no ids and count as the current incarnation. Cost: one walk of the snapshot's
 * ancestors, and with an earlier incarnation one planning of the scan's files.
 */
final class Incarnations {
  /** per topic: its earlier incarnation's last commit (its data sequence number and time) */
  private final Map<String, Snapshot> endedAt;

  private Incarnations(Map<String, Snapshot> endedAt) {
    this.endedAt = endedAt;
  }

  /**
   * The earlier incarnations, in the ancestry of {@code snapshot}, of the topics of {@code keys}
   * (source keys) as {@code current} names them.
   */
  static Incarnations of(Table table, Snapshot snapshot, KafkaIds current, Set<String> keys) {
    Set<String> topics = new HashSet<>();
    keys.forEach(k -> topics.add(SourceKeys.topic(k)));
    topics.removeIf(t -> current.topicId(t) == null);
    Map<String, Snapshot> endedAt = new HashMap<>();
    if (snapshot == null || topics.isEmpty()) {
      return new Incarnations(endedAt);
    }
    for (Snapshot s : SinkHistory.from(table, snapshot)) {
      String encoded = s.summary().get(SnapshotSummaryKeys.POSITIONS);
      if (encoded == null || topics.stream().allMatch(t -> encoded.contains(current.topicId(t)))) {
        continue; // no positions, or only of the current incarnations (ids never repeat): no parse
      }
      SinkPositions recorded = TablePositions.fromSummary(s.summary(), s.snapshotId());
      if (recorded == null) {
        continue;
      }
      for (String topic : topics) {
        String id = recorded.ids().topicId(topic);
        if (id != null && !id.equals(current.topicId(topic))) {
          endedAt.putIfAbsent(topic, s);
        }
      }
      if (endedAt.size() == topics.size()) {
        break;
      }
    }
    return new Incarnations(endedAt);
  }

  /**
   * The data sequence number of every data file of {@code table} at {@code snapshotId} that {@code
   * filter} may match, by location as the scan reports it; empty when no topic had an earlier
   * incarnation (every file counts then).
   */
  Map<String, Long> fileSequences(Table table, long snapshotId, Expression filter) {
    Map<String, Long> sequences = new HashMap<>();
    if (endedAt.isEmpty()) {
      return sequences;
    }
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(snapshotId).filter(filter).planFiles()) {
      for (FileScanTask t : tasks) {
        sequences.put(t.file().location(), t.file().dataSequenceNumber());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sequences;
  }

  /**
   * Whether a row of Kafka source key {@code source} in a file of data sequence number {@code
   * fileSequence} (null: unknown, counts) was committed by its topic's current incarnation.
   */
  boolean current(String source, Long fileSequence) {
    Snapshot ended = endedAt.get(SourceKeys.topic(source));
    return ended == null || fileSequence == null || fileSequence > ended.sequenceNumber();
  }

  /**
   * For topics whose recorded positions are of an earlier incarnation (the table was rolled back to
   * before the topic was created again): per topic, the time (micros, as {@code rejected_at}) of
   * the newest commit among all the table's snapshots, rolled away ones included, that names
   * another id for it. Rejects after it are the current incarnation's: the rejects table is not
   * rolled back with the telemetry table, so they are still there. Cost: one pass over the
   * snapshots' summaries, parsing those that do not name the current id.
   */
  static Map<String, Long> rejectsOfCurrentSince(
      Table table, KafkaIds current, Set<String> topics) {
    Map<String, Long> since = new HashMap<>();
    for (Snapshot s : table.snapshots()) {
      String encoded = s.summary().get(SnapshotSummaryKeys.POSITIONS);
      if (encoded == null) {
        continue;
      }
      SinkPositions recorded = null;
      for (String topic : topics) {
        String id = current.topicId(topic);
        if (id == null || encoded.contains(id)) {
          continue;
        }
        if (recorded == null) {
          recorded = TablePositions.fromSummary(s.summary(), s.snapshotId());
          if (recorded == null) {
            break;
          }
        }
        String was = recorded.ids().topicId(topic);
        if (was != null && !was.equals(id)) {
          since.merge(topic, s.timestampMillis() * 1000, Math::max);
        }
      }
    }
    return since;
  }

  /**
   * Per topic with an earlier incarnation, the time (micros, as {@code rejected_at}) after which
   * its rejects are of the current one: the earlier incarnation's last commit.
   */
  Map<String, Long> rejectsSince() {
    Map<String, Long> since = new HashMap<>();
    endedAt.forEach((topic, s) -> since.put(topic, s.timestampMillis() * 1000));
    return since;
  }
}
