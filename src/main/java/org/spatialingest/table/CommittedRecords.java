package org.spatialingest.table;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Which source records the tables already hold above the positions the primary table records: a
 * closed file of one time partition can commit records while lower ones of the same source still
 * wait in another partition's buffer, so a start without state must skip exactly those. Read once,
 * at such a start, from the telemetry table's {@code source}/{@code source_offset} columns and the
 * rejects table's origin columns; the amount is bounded by what the sink buffered (≈ L of data).
 *
 * @param positions per source key, the position below which everything is committed
 * @param above per source key, the sorted positions at or above it that are committed too
 */
public record CommittedRecords(Map<String, Long> positions, Map<String, long[]> above) {
  /**
   * Above this many sources the scan reads every row's two columns instead of one filter term per
   * source.
   */
  private static final int MAX_FILTER_TERMS = 256;

  /**
   * Rejects rejected this long before the telemetry snapshot are still looked at (a checkpoint and
   * a commit).
   */
  private static final long REJECTS_SLACK_MS = 10 * 60_000L;

  public static CommittedRecords none() {
    return new CommittedRecords(Map.of(), Map.of());
  }

  /** Whether the record at {@code position} of {@code source} is in the tables. */
  public boolean contains(String source, long position) {
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
    return positions.isEmpty();
  }

  /**
   * Reads the positions of {@code telemetry} as of its snapshot {@code snapshotId}, and the records
   * committed above them in the telemetry table at that snapshot and in the rejects table at {@code
   * rejectsSnapshotId} (-1: none; it is committed before the telemetry table, so its snapshot can
   * be newer). Deterministic for the two ids, so every subtask and every restore gets the same
   * answer.
   */
  public static CommittedRecords read(
      Table telemetry, long snapshotId, Table rejects, long rejectsSnapshotId) {
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
    Map<String, Long> positions =
        new HashMap<>(snapshot == null ? Map.of() : TablePositions.readAsOf(telemetry, snapshot));
    Map<String, LongList> found = new HashMap<>();
    if (!positions.isEmpty()) {
      scan(
          IcebergGenerics.read(telemetry).useSnapshot(snapshotId),
          telemetryFilter(positions),
          "source",
          "source_offset",
          positions,
          found);
    }
    if (rejectsSnapshotId >= 0) {
      // rejects are committed before the telemetry table: those of a batch whose telemetry commit
      // never happened are
      // newer than the positions, possibly of sources the positions do not name yet
      long horizon =
          snapshot == null
              ? Long.MIN_VALUE
              : (snapshot.timestampMillis() - REJECTS_SLACK_MS) * 1000;
      scanRejects(
          IcebergGenerics.read(rejects).useSnapshot(rejectsSnapshotId), positions, horizon, found);
    }
    if (found.isEmpty() && positions.isEmpty()) {
      return none();
    }
    Map<String, long[]> above = new HashMap<>();
    found.forEach((key, list) -> above.put(key, list.sortedDistinct()));
    // a source with committed rejects but no position yet: nothing is complete below, its rejects
    // are skipped one by one
    found.keySet().forEach(key -> positions.putIfAbsent(key, 0L));
    return new CommittedRecords(Map.copyOf(positions), above);
  }

  private static Expression telemetryFilter(Map<String, Long> positions) {
    if (positions.size() > MAX_FILTER_TERMS) {
      return Expressions.alwaysTrue();
    }
    List<Expression> terms = new ArrayList<>();
    positions.forEach(
        (key, pos) ->
            terms.add(
                Expressions.and(
                    Expressions.equal("source", key),
                    Expressions.greaterThanOrEqual("source_offset", pos))));
    return anyOf(terms);
  }

  private static void scan(
      IcebergGenerics.ScanBuilder scan,
      Expression filter,
      String keyColumn,
      String positionColumn,
      Map<String, Long> positions,
      Map<String, LongList> found) {
    try (CloseableIterable<Record> rows =
        scan.select(keyColumn, positionColumn).where(filter).build()) {
      for (Record r : rows) {
        Object key = r.getField(keyColumn);
        Object pos = r.getField(positionColumn);
        if (key != null && pos != null) {
          add(key.toString(), (Long) pos, positions, found);
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
      Map<String, LongList> found) {
    List<Expression> terms = new ArrayList<>();
    terms.add(Expressions.greaterThanOrEqual("rejected_at", horizonMicros));
    if (positions.size() <= MAX_FILTER_TERMS) {
      positions.forEach(
          (key, pos) ->
              terms.add(
                  SourceKeys.isFile(key)
                      ? Expressions.and(
                          Expressions.equal("file", key.substring("file:".length())),
                          Expressions.greaterThanOrEqual("line", pos))
                      : Expressions.and(
                          Expressions.and(
                              Expressions.equal("topic", SourceKeys.topic(key)),
                              Expressions.equal("partition", SourceKeys.partition(key))),
                          Expressions.greaterThanOrEqual("offset", pos))));
    }
    Expression filter =
        positions.size() <= MAX_FILTER_TERMS ? anyOf(terms) : Expressions.alwaysTrue();
    try (CloseableIterable<Record> rows =
        scan.select("topic", "partition", "offset", "file", "line").where(filter).build()) {
      for (Record r : rows) {
        String key;
        long pos;
        if (r.getField("topic") != null) {
          key = SourceKeys.kafka(r.getField("topic").toString(), (Integer) r.getField("partition"));
          pos = (Long) r.getField("offset");
        } else if (r.getField("file") != null) {
          key = SourceKeys.file(r.getField("file").toString());
          pos = (Long) r.getField("line");
        } else {
          continue;
        }
        if (positions.containsKey(key)) {
          add(key, pos, positions, found);
        } else {
          found.computeIfAbsent(key, k -> new LongList()).add(pos);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
