package org.spatialingest.sink.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;
import org.spatialingest.sink.core.ClosedFileManifests;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.ReportedPositions;
import org.spatialingest.sink.core.WriterReport;
import org.spatialingest.sink.core.WriterReportSerializer;

/**
 * Positions sent as changes ({@link ReportedPositions} on the writers, {@link WriterPositions} in
 * the aggregator, through {@link WriterReportSerializer}) give the positions the complete reports
 * gave: min(highest received, lowest buffered), per key, over all writers. Model writers hold rows
 * in two buffers (two time partitions) that close independently, so a writer can close its higher
 * rows of a key and keep the lower ones; a restore brings back only the buffered rows. The real
 * writers and aggregator run in {@code FileBatchAggregatorHarnessTest}.
 */
class WriterPositionsTest {
  private static final WriterReportSerializer SERIALIZER = new WriterReportSerializer();

  /** A writer instance: per buffer, per key, the positions it holds; and what it has received. */
  private static final class ModelWriter {
    final String token;
    final ReportedPositions reported = new ReportedPositions();
    final List<Map<String, TreeSet<Long>>> buffers = List.of(new HashMap<>(), new HashMap<>());
    final Map<String, Long> seen = new HashMap<>();
    final Set<String> closedKeys = new HashSet<>();

    ModelWriter(String token) {
      this.token = token;
    }

    void receive(String key, long position, int buffer) {
      buffers.get(buffer).computeIfAbsent(key, k -> new TreeSet<>()).add(position);
      seen.merge(key, position + 1, Math::max);
    }

    void close(int buffer) {
      closedKeys.addAll(buffers.get(buffer).keySet());
      buffers.get(buffer).clear();
    }

    Map<String, Long> lowest() {
      Map<String, Long> lowest = new HashMap<>();
      for (Map<String, TreeSet<Long>> b : buffers) {
        b.forEach((key, rows) -> lowest.merge(key, rows.first(), Math::min));
      }
      return lowest;
    }

    /** The same buffers in a new instance: it knows only the rows it restored. */
    ModelWriter restored(String newToken) {
      ModelWriter w = new ModelWriter(newToken);
      for (int b = 0; b < 2; b++) {
        int buffer = b;
        buffers.get(b).forEach((key, rows) -> rows.forEach(p -> w.receive(key, p, buffer)));
      }
      return w;
    }

    WriterReport report() throws Exception {
      WriterReport report = reported.next(token, List.of(), seen, lowest(), closedKeys);
      closedKeys.clear();
      return SERIALIZER.deserialize(SERIALIZER.getVersion(), SERIALIZER.serialize(report));
    }
  }

  /** The aggregator of complete reports, as before: what the positions must stay. */
  private static Map<String, Long> expected(List<ModelWriter> writers, Map<String, Long> received) {
    Map<String, Long> positions = new HashMap<>(received);
    for (ModelWriter w : writers) {
      w.lowest().forEach((key, lowest) -> positions.merge(key, lowest, Math::min));
    }
    return positions;
  }

  private static void receivedFrom(List<ModelWriter> writers, Map<String, Long> received) {
    for (ModelWriter w : writers) {
      w.seen.forEach((key, next) -> received.merge(key, next, Math::max));
    }
  }

  @Test
  void changesGiveThePositionsOfCompleteReportsThroughClosesAndRestores() throws Exception {
    Random random = new Random(37);
    int writerCount = 6;
    int keyCount = 9;
    Map<String, Long> next = new HashMap<>();
    Map<String, Long> start = Map.of("t/0", 5L, "t/99", 7L); // as read from the table
    for (int k = 0; k < keyCount; k++) {
      next.put("t/" + k, start.getOrDefault("t/" + k, 0L));
    }
    List<ModelWriter> writers = new ArrayList<>();
    for (int w = 0; w < writerCount; w++) {
      writers.add(new ModelWriter("w" + w));
    }
    WriterPositions aggregator = new WriterPositions();
    aggregator.continueFrom(start);
    Map<String, Long> fullReceived = new HashMap<>(start); // what complete reports would hold
    int entries = 0;
    int completeEntries = 0;
    int restores = 0;
    for (int checkpoint = 1; checkpoint <= 400; checkpoint++) {
      int quiet = checkpoint % 4; // every fourth checkpoint nothing arrives and nothing closes
      // a few keys get rows at a time, so keys go idle with rows still buffered
      int firstActive = random.nextInt(keyCount);
      for (int row = 0; quiet != 0 && row < 30; row++) {
        String key = "t/" + (firstActive + random.nextInt(2)) % keyCount;
        long position = next.merge(key, 1L + random.nextInt(3), Long::sum);
        writers.get(random.nextInt(writerCount)).receive(key, position, random.nextInt(2));
      }
      for (ModelWriter w : writers) {
        if (quiet != 0 && random.nextInt(5) == 0) {
          w.close(random.nextInt(2));
        }
      }
      receivedFrom(writers, fullReceived);
      for (ModelWriter w : writers) {
        WriterReport report = w.report();
        entries += report.positionEntries();
        completeEntries += w.seen.size() + w.lowest().size();
        if (quiet == 0) {
          assertThat(report.positionEntries()).as("nothing changed, nothing sent").isZero();
        }
        aggregator.apply(report);
      }
      assertThat(aggregator.positions())
          .as("checkpoint %d", checkpoint)
          .isEqualTo(expected(writers, fullReceived));
      if (checkpoint % 20 == 0) {
        // a restore: new writer instances with the buffered rows only, a new aggregator with the
        // received positions of its state
        restores++;
        List<ModelWriter> restoredWriters = new ArrayList<>();
        for (ModelWriter w : writers) {
          restoredWriters.add(w.restored(w.token + "-" + checkpoint));
        }
        writers = restoredWriters;
        WriterPositions restored = new WriterPositions();
        restored.continueFrom(Map.copyOf(aggregator.receivedEnds()));
        aggregator = restored;
        for (ModelWriter w : writers) {
          WriterReport report = w.report();
          assertThat(report.complete()).as("a new instance reports completely").isTrue();
          aggregator.apply(report);
        }
        assertThat(aggregator.positions())
            .as("after the restore at %d", checkpoint)
            .isEqualTo(expected(writers, fullReceived));
      }
    }
    assertThat(restores).isEqualTo(20);
    assertThat(entries)
        .as("changes are a fraction of complete reports")
        .isLessThan(completeEntries / 3);
  }

  @Test
  void aWriterWhoseKeysAllCloseLeavesTheHighestReceived() throws Exception {
    ModelWriter a = new ModelWriter("a");
    ModelWriter b = new ModelWriter("b");
    WriterPositions aggregator = new WriterPositions();
    for (long p = 0; p < 10; p++) {
      a.receive("t/0", p, 0);
      a.receive("t/1", p, 1);
    }
    b.receive("t/0", 10, 0);
    aggregator.apply(a.report());
    aggregator.apply(b.report());
    assertThat(aggregator.positions()).isEqualTo(Map.of("t/0", 0L, "t/1", 0L));

    a.close(0);
    a.close(1);
    WriterReport closed = a.report();
    assertThat(closed.buffered()).isEmpty();
    aggregator.apply(closed);
    assertThat(aggregator.positions())
        .as("t/0: b still buffers 10; t/1: nobody buffers it")
        .isEqualTo(Map.of("t/0", 10L, "t/1", 10L));
    aggregator.apply(a.report());
    assertThat(aggregator.positions()).isEqualTo(Map.of("t/0", 10L, "t/1", 10L));
  }

  @Test
  void twoWritersOnOneKeyTheLowestHolderMovingUpHandsOverToTheOther() throws Exception {
    ModelWriter a = new ModelWriter("a");
    ModelWriter b = new ModelWriter("b");
    WriterPositions aggregator = new WriterPositions();
    a.receive("t/0", 3, 0);
    a.receive("t/0", 20, 1);
    b.receive("t/0", 8, 0);
    b.receive("t/0", 9, 0);
    aggregator.apply(a.report());
    aggregator.apply(b.report());
    assertThat(aggregator.positions()).isEqualTo(Map.of("t/0", 3L));
    a.close(0); // a keeps 20
    WriterReport moved = a.report();
    assertThat(moved.complete()).isFalse();
    assertThat(moved.buffered()).isEqualTo(Map.of("t/0", 20L));
    aggregator.apply(moved);
    assertThat(aggregator.positions()).as("b's 8 is now the lowest").isEqualTo(Map.of("t/0", 8L));
    b.close(0);
    aggregator.apply(b.report());
    assertThat(aggregator.positions()).isEqualTo(Map.of("t/0", 20L));
    a.close(1);
    aggregator.apply(a.report());
    assertThat(aggregator.positions()).isEqualTo(Map.of("t/0", 21L));
  }

  @Test
  void changesFromAWriterWithoutACompleteReportAreRefused() {
    WriterPositions aggregator = new WriterPositions();
    WriterReport changes =
        new WriterReport(
            "w", ClosedFiles.of(List.of()), Map.of(), Map.of("t/0", 1L), Set.of(), false);
    assertThatThrownBy(() -> aggregator.apply(changes))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("aligned checkpoints");
  }

  /** A report of the previous version (every report complete) is still read, as complete. */
  @Test
  void theCompleteVersionIsStillRead() throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(64);
    out.writeUTF("w");
    ClosedFiles.of(List.of()).write(out);
    ClosedFileManifests.writePositions(Map.of("t/0", 9L), out);
    ClosedFileManifests.writePositions(Map.of("t/0", 4L), out);
    WriterReport report = SERIALIZER.deserialize(3, out.getCopyOfBuffer());
    assertThat(report.complete()).isTrue();
    assertThat(report.receivedEnds()).isEqualTo(Map.of("t/0", 9L));
    assertThat(report.buffered()).isEqualTo(Map.of("t/0", 4L));
    assertThat(report.unbuffered()).isEmpty();
  }
}
