package org.spatialingest.table;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Which source records the tables already hold, so a start without state skips exactly those.
 *
 * <p>Kafka: below the positions the primary table records ({@link TablePositions}) everything is
 * committed; above them, a closed file of one time partition can commit records while lower ones of
 * the same partition still wait in another partition's buffer, so those are read too, from the
 * telemetry table's {@code source}/{@code source_offset} columns and the rejects table's origin
 * columns; their number is bounded by what the sink buffered (≈ L of data).
 *
 * <p>Files: every committed line of a file this sink fingerprinted ({@link FileInputs}: its paths
 * and the earlier paths of files that moved), read from the same columns (rows whose {@code source}
 * starts with {@code file:}, rejects with a {@code file}), kept per file as line ranges ({@link
 * PositionRanges}): a file read to its end is one range. Lines of files only another sink read into
 * the table are not this sink's: a new {@code sink.id} reads every file again. A sink whose commits
 * name no fingerprints (written before they existed) counts every committed line, as it did then.
 * Exact whether or not the file was finished, which the sink cannot tell. Cost at such a start: one
 * pass over those two columns of the committed file rows (less than reading the input files again,
 * which the re-run does anyway), and in memory about 16 bytes per line range plus the file's key.
 *
 * <p>Read once at such a start, where the job is built, for a file source (which files need no
 * reading at all, and the filter's skip, passed on); per subtask for a Kafka source and at a
 * restore; deterministic for the two snapshot ids.
 *
 * @param positions per Kafka source key, the position below which everything is committed
 * @param above per Kafka source key, the sorted positions at or above it that are committed too
 * @param files per file source key, the committed lines
 */
public record CommittedRecords(
    Map<String, Long> positions, Map<String, long[]> above, Map<String, PositionRanges> files)
    implements Serializable {
  /**
   * Above this many partitions the scans filter by topic and its lowest position instead of one
   * term per partition.
   */
  private static final int MAX_FILTER_TERMS = 256;

  private static final String FILE_KEY_PREFIX = SourceKeys.file("");

  public static CommittedRecords none() {
    return new CommittedRecords(Map.of(), Map.of(), Map.of());
  }

  /** Whether the record at {@code position} of {@code source} is in the tables. */
  public boolean contains(String source, long position) {
    if (SourceKeys.isFile(source)) {
      PositionRanges lines = files.get(source);
      return lines != null && lines.contains(position);
    }
    Long below = positions.get(source);
    if (below == null) {
      return false;
    }
    if (position < below) {
      return true;
    }
    long[] committed = above.get(source);
    return committed != null && Arrays.binarySearch(committed, position) >= 0;
  }

  public boolean isEmpty() {
    return positions.isEmpty() && files.isEmpty();
  }

  /**
   * How many of the lines {@code 1..lastLine} of a file are committed under any of {@code keys}
   * (its source key and those of its earlier paths).
   */
  public long committedLines(List<String> keys, long lastLine) {
    List<PositionRanges> sets = new ArrayList<>(keys.size());
    for (String key : keys) {
      PositionRanges lines = files.get(key);
      if (lines != null) {
        sets.add(lines);
      }
    }
    return sets.isEmpty() ? 0 : PositionRanges.countIn(sets, 1, lastLine + 1);
  }

  /** The same with only the committed lines of the file source keys {@code keys}. */
  public CommittedRecords onlyFiles(Set<String> keys) {
    Map<String, PositionRanges> kept = new HashMap<>();
    files.forEach(
        (key, lines) -> {
          if (keys.contains(key)) {
            kept.put(key, lines);
          }
        });
    return new CommittedRecords(positions, above, Map.copyOf(kept));
  }

  /**
   * Reads the positions of sink {@code sinkId} in {@code telemetry} as of its snapshot {@code
   * snapshotId} (only those that apply to the {@code current} Kafka ids: {@link
   * SinkPositions#applicableTo}; a topic whose positions do not apply has nothing skipped), the
   * records committed above them and every committed line of a file source, in the telemetry table
   * at that snapshot and in the rejects table at {@code rejectsSnapshotId} (-1: none; it is
   * committed before the telemetry table, so its snapshot can be newer). Deterministic for the two
   * ids, so every subtask and every restore gets the same answer.
   */
  public static CommittedRecords read(
      Table telemetry,
      long snapshotId,
      Table rejects,
      long rejectsSnapshotId,
      String sinkId,
      KafkaIds current) {
    Snapshot snapshot = snapshotId < 0 ? null : telemetry.snapshot(snapshotId);
    if (snapshotId >= 0 && snapshot == null
        || rejectsSnapshotId >= 0 && rejects.snapshot(rejectsSnapshotId) == null) {
      throw new IllegalStateException(
          "snapshot "
              + snapshotId
              + " of "
              + telemetry.name()
              + " or "
              + rejectsSnapshotId
              + " of "
              + rejects.name()
              + " is gone (expired)");
    }
    SinkPositions recorded =
        snapshot == null ? null : TablePositions.readSink(telemetry, sinkId, snapshot).orElse(null);
    Map<String, Long> positions =
        new HashMap<>(recorded == null ? Map.of() : recorded.applicableTo(current));
    // records of a topic whose positions do not apply (created again, another cluster) are new
    // records under old source keys: nothing of that topic is skipped
    Set<String> notApplied = new HashSet<>();
    if (recorded != null) {
      recorded.offsets().keySet().stream()
          .filter(key -> !positions.containsKey(key))
          .map(SourceKeys::topic)
          .forEach(notApplied::add);
    }
    boolean otherCluster = recorded != null && recorded.otherCluster(current);
    Predicate<String> ownFile = ownFiles(telemetry, snapshot, sinkId, recorded);
    Map<String, LongList> found = new HashMap<>();
    Map<String, PositionRanges> files = new HashMap<>();
    Incarnations incarnations = Incarnations.of(telemetry, snapshot, current, positions.keySet());
    if (snapshot != null) {
      Expression filter =
          Expressions.or(
              kafkaFilter(positions, "source", "source_offset"),
              Expressions.startsWith("source", FILE_KEY_PREFIX));
      scan(
          telemetry,
          snapshotId,
          filter,
          incarnations.fileSequences(telemetry, snapshotId, filter),
          incarnations,
          positions,
          ownFile,
          found,
          files);
    }
    if (rejectsSnapshotId >= 0) {
      // rejects are committed before the telemetry table: those of a batch whose telemetry commit
      // never happened are
      // newer than the positions, possibly of sources the positions do not name yet
      long horizon =
          snapshot == null
              ? Long.MIN_VALUE
              : SinkHistory.horizon(snapshot.timestampMillis()) * 1000;
      // a topic whose positions are of an earlier incarnation: its rejects since that incarnation's
      // last commit are the current one's (the rejects table was not rolled back with the
      // telemetry table) and are skipped; older ones are of records gone with the old topic
      Map<String, Long> since = new HashMap<>(incarnations.rejectsSince());
      Map<String, Long> ofCurrent =
          otherCluster || notApplied.isEmpty()
              ? Map.of()
              : Incarnations.rejectsOfCurrentSince(telemetry, current, notApplied);
      since.putAll(ofCurrent);
      scanRejects(
          IcebergGenerics.read(rejects).useSnapshot(rejectsSnapshotId),
          positions,
          horizon,
          since,
          ownFile,
          found,
          files);
      found
          .keySet()
          .removeIf(
              key -> {
                String topic = SourceKeys.topic(key);
                return otherCluster || notApplied.contains(topic) && !ofCurrent.containsKey(topic);
              });
    }
    if (found.isEmpty() && positions.isEmpty() && files.isEmpty()) {
      return none();
    }
    Map<String, long[]> above = new HashMap<>();
    found.forEach((key, list) -> above.put(key, list.sortedDistinct()));
    // a source with committed rejects but no position yet: nothing is complete below, its rejects
    // are skipped one by one
    found.keySet().forEach(key -> positions.putIfAbsent(key, 0L));
    files.values().forEach(PositionRanges::done);
    return new CommittedRecords(Map.copyOf(positions), above, Map.copyOf(files));
  }

  /**
   * Which file source keys are this sink's: those its latest commit's fingerprints name, with the
   * earlier paths of files that moved; without a commit of its own, every key but those other sinks
   * fingerprinted; every key when its commits name no fingerprints (a table written before them,
   * matched as it was then).
   */
  private static Predicate<String> ownFiles(
      Table telemetry, Snapshot snapshot, String sinkId, SinkPositions recorded) {
    if (recorded == null) {
      // no commit of this sink in the telemetry table (a new sink id, or a first run that died
      // between the rejects table's commit and the telemetry table's): the lines of files another
      // sink fingerprinted are that sink's; every other committed line counts
      Set<String> others = new HashSet<>();
      Set<String> seen = new HashSet<>();
      if (snapshot != null) {
        for (Snapshot s : SinkHistory.from(telemetry, snapshot)) {
          if (s.summary().get(SnapshotSummaryKeys.FILE_INPUTS) == null) {
            continue;
          }
          SinkPositions of = TablePositions.fromSummary(s.summary(), s.snapshotId());
          if (of == null || of.ofSink(sinkId) || !seen.add(of.sinkId())) {
            continue;
          }
          others.addAll(FileInputs.read(telemetry, s).sourceKeys());
        }
      }
      return key -> !others.contains(key);
    }
    Snapshot at = telemetry.snapshot(recorded.snapshotId());
    if (at == null || at.summary().get(SnapshotSummaryKeys.FILE_INPUTS) == null) {
      return key -> true;
    }
    return FileInputs.read(telemetry, at).sourceKeys()::contains;
  }

  /**
   * Rows at or above their partition's position: one term per partition, or above {@link
   * #MAX_FILTER_TERMS} one per topic at its lowest position (the rows are checked one by one
   * anyway); none when there are no positions.
   */
  private static Expression kafkaFilter(
      Map<String, Long> positions, String keyColumn, String positionColumn) {
    List<Expression> terms = new ArrayList<>();
    addPositionTerms(
        positions,
        key -> Expressions.equal(keyColumn, key),
        topic -> Expressions.startsWith(keyColumn, SourceKeys.kafkaPrefix(topic)),
        positionColumn,
        terms);
    return terms.isEmpty() ? Expressions.alwaysFalse() : anyOf(terms);
  }

  /**
   * Adds to {@code terms} "this source, at or above its position": one term per source key, or
   * above {@link #MAX_FILTER_TERMS} one per topic at its lowest position.
   */
  private static void addPositionTerms(
      Map<String, Long> positions,
      Function<String, Expression> isKey,
      Function<String, Expression> isTopic,
      String positionColumn,
      List<Expression> terms) {
    if (positions.size() <= MAX_FILTER_TERMS) {
      positions.forEach(
          (key, pos) ->
              terms.add(
                  Expressions.and(
                      isKey.apply(key), Expressions.greaterThanOrEqual(positionColumn, pos))));
    } else {
      Map<String, Long> lowest = new HashMap<>();
      positions.forEach((key, pos) -> lowest.merge(SourceKeys.topic(key), pos, Math::min));
      lowest.forEach(
          (topic, pos) ->
              terms.add(
                  Expressions.and(
                      isTopic.apply(topic), Expressions.greaterThanOrEqual(positionColumn, pos))));
    }
  }

  /**
   * Rows matching {@code filter} at {@code snapshotId}; a Kafka row counts only if the file that
   * holds it was committed by its topic's current incarnation ({@link Incarnations}).
   *
   * @param fileSequences each matching data file's data sequence number, by location
   */
  private static void scan(
      Table table,
      long snapshotId,
      Expression filter,
      Map<String, Long> fileSequences,
      Incarnations incarnations,
      Map<String, Long> positions,
      Predicate<String> ownFile,
      Map<String, LongList> found,
      Map<String, PositionRanges> files) {
    Schema projection =
        new Schema(
            table.schema().findField("source"),
            table.schema().findField("source_offset"),
            MetadataColumns.FILE_PATH);
    try (CloseableIterable<Record> rows =
        IcebergGenerics.read(table)
            .useSnapshot(snapshotId)
            .project(projection)
            .where(filter)
            .build()) {
      for (Record r : rows) {
        Object key = r.getField("source");
        Object pos = r.getField("source_offset");
        if (key == null || pos == null) {
          continue;
        }
        String source = key.toString();
        if (SourceKeys.isFile(source)) {
          if (ownFile.test(source)) {
            files.computeIfAbsent(source, k -> new PositionRanges()).add((Long) pos);
          }
        } else if (incarnations.current(
            source, fileSequences.get(r.getField(MetadataColumns.FILE_PATH.name()).toString()))) {
          add(source, (Long) pos, positions, found);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Rejects at or above their source's position, and rejects of sources without a position that
   * were rejected after {@code horizonMicros} ({@code rejected_at}).
   */
  private static void scanRejects(
      IcebergGenerics.ScanBuilder scan,
      Map<String, Long> positions,
      long horizonMicros,
      Map<String, Long> incarnationSinceMicros,
      Predicate<String> ownFile,
      Map<String, LongList> found,
      Map<String, PositionRanges> files) {
    List<Expression> terms = new ArrayList<>();
    terms.add(Expressions.greaterThanOrEqual("rejected_at", horizonMicros));
    terms.add(Expressions.notNull("file"));
    addPositionTerms(
        positions,
        key ->
            Expressions.and(
                Expressions.equal("topic", SourceKeys.topic(key)),
                Expressions.equal("partition", SourceKeys.partition(key))),
        topic -> Expressions.equal("topic", topic),
        "offset",
        terms);
    try (CloseableIterable<Record> rows =
        scan.select("topic", "partition", "offset", "file", "line", "rejected_at")
            .where(anyOf(terms))
            .build()) {
      for (Record r : rows) {
        if (r.getField("topic") != null) {
          String key =
              SourceKeys.kafka(r.getField("topic").toString(), (Integer) r.getField("partition"));
          long pos = (Long) r.getField("offset");
          Long since = incarnationSinceMicros.get(SourceKeys.topic(key));
          if (since != null && micros(r.getField("rejected_at")) <= since) {
            continue; // rejected from an earlier incarnation of the topic
          }
          if (positions.containsKey(key)) {
            add(key, pos, positions, found);
          } else {
            found.computeIfAbsent(key, k -> new LongList()).add(pos);
          }
        } else if (r.getField("file") != null) {
          String key = SourceKeys.file(r.getField("file").toString());
          if (ownFile.test(key)) {
            files.computeIfAbsent(key, k -> new PositionRanges()).add((Long) r.getField("line"));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A {@code timestamptz} value as the generic reader returns it, in micros since the epoch. */
  private static long micros(Object value) {
    return java.time.temporal.ChronoUnit.MICROS.between(
        java.time.Instant.EPOCH, ((java.time.OffsetDateTime) value).toInstant());
  }

  private static void add(
      String key, long pos, Map<String, Long> positions, Map<String, LongList> found) {
    Long below = positions.get(key);
    if (below != null && pos >= below) {
      found.computeIfAbsent(key, k -> new LongList()).add(pos);
    }
  }

  /**
   * OR of the terms as a balanced tree (a long left-deep chain would overflow the stack when
   * bound).
   */
  private static Expression anyOf(List<Expression> terms) {
    if (terms.size() == 1) {
      return terms.get(0);
    }
    int mid = terms.size() / 2;
    return Expressions.or(anyOf(terms.subList(0, mid)), anyOf(terms.subList(mid, terms.size())));
  }

  private static final class LongList {
    private long[] values = new long[16];
    private int size;

    void add(long v) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = v;
    }

    long[] sortedDistinct() {
      long[] v = Arrays.copyOf(values, size);
      Arrays.sort(v);
      int n = 0;
      for (int i = 0; i < v.length; i++) {
        if (i == 0 || v[i] != v[i - 1]) {
          v[n++] = v[i];
        }
      }
      return Arrays.copyOf(v, n);
    }
  }
}
