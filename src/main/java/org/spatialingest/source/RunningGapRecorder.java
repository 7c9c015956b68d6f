package org.spatialingest.source;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.metrics.Counter;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.table.SinkHistory;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;

/**
 * Records a gap the Kafka consumer went past while running ({@code kafka.on-gap: continue}: its
 * {@code auto.offset.reset} is {@code earliest}, so a fetch offset that retention or {@code
 * kafka-delete-records} removed jumps to the first available one without a word). One reader
 * subtask's view: per partition the next offset it expects; a record further on (one offset or
 * many: transaction markers and aborted batches skip offsets too) asks Kafka for the partition's
 * first available offset, and only the offsets below it that the reader never saw are a gap.
 *
 * <p>The gap is recorded before the record that follows it is emitted, so before any commit can
 * claim positions past it: an empty snapshot of the telemetry table whose summary has {@link
 * SnapshotSummaryKeys#GAPS} and {@link SnapshotSummaryKeys#GAP_RECORDS} (what {@code inspect}
 * shows), unless the history since the sink's last commits already has the same gap (a restart that
 * met it again), a WARN, and the reader's metric {@code kafkaGapRecords}. Cost: nothing per record
 * but a map lookup; one {@code listOffsets} per jump (with a transactional upstream, about one per
 * transaction and partition), one Iceberg commit per gap.
 */
final class RunningGapRecorder implements Serializable {
  private static final Logger LOG = LoggerFactory.getLogger(RunningGapRecorder.class);

  /** how far back in the table's history a gap already recorded is looked for */
  private static final int HISTORY = 1_000;

  private final TableLoader telemetry;
  private final String sinkId;
  private final Map<String, String> connection;

  private transient Map<String, Long> expected;
  private transient Admin admin;
  private transient Counter gapRecords;

  RunningGapRecorder(TableLoader telemetry, String sinkId, Map<String, String> connection) {
    this.telemetry = telemetry;
    this.sinkId = sinkId;
    this.connection = new HashMap<>(connection);
  }

  /** A copy for one reader subtask (the source's instance is shared by its readers). */
  RunningGapRecorder(RunningGapRecorder prototype) {
    this(prototype.telemetry, prototype.sinkId, prototype.connection);
  }

  void open(Counter gapRecords) {
    this.expected = new HashMap<>();
    this.gapRecords = gapRecords;
  }

  /** Where the reader starts a partition (a split's starting offset, when it is one). */
  void starts(String topic, int partition, long offset) {
    if (offset >= 0) {
      expected.put(SourceKeys.kafka(topic, partition), offset);
    }
  }

  /** Sees the next record of a partition; records the gap before it, if there is one. */
  void next(SourceRecord record) {
    if (record.topic == null) {
      return;
    }
    String key =
        record.source != null ? record.source : SourceKeys.kafka(record.topic, record.partition);
    Long next = expected.put(key, record.offset + 1);
    if (next == null || record.offset <= next) {
      return;
    }
    // a jump: transaction markers and aborted batches (read_committed) skip offsets as retention
    // does, so only the partition's first available offset tells them apart
    long first = firstAvailable(record.topic, record.partition);
    long end = Math.min(record.offset, first);
    if (end > next) {
      record(new StartCheck.Gap(record.topic, record.partition, next, end));
    }
  }

  private long firstAvailable(String topic, int partition) {
    TopicPartition tp = new TopicPartition(topic, partition);
    try {
      if (admin == null) {
        admin = Admin.create(KafkaClients.toProperties(connection));
      }
      return admin
          .listOffsets(Map.of(tp, OffsetSpec.earliest()))
          .all()
          .get(30, TimeUnit.SECONDS)
          .get(tp)
          .offset();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException(
          "cannot tell whether records of " + tp + " were deleted before they were read", e);
    }
  }

  private void record(StartCheck.Gap gap) {
    LOG.warn(
        "{} while running; kafka.on-gap is continue: went on from the first available offset, "
            + "recorded in the table's snapshot summary",
        gap.describe());
    gapRecords.inc(gap.lost());
    try (TableLoader loader = telemetry.clone()) {
      loader.open();
      Table table = loader.loadTable();
      if (alreadyRecorded(table, gap.range())) {
        LOG.info("Gap {} is already recorded (met again after a restart)", gap.range());
        return;
      }
      table
          .newFastAppend()
          .set(SnapshotSummaryKeys.GAPS, gap.range())
          .set(SnapshotSummaryKeys.GAP_RECORDS, Long.toString(gap.lost()))
          .set(SnapshotSummaryKeys.GAP_SINK, sinkId)
          .commit();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private boolean alreadyRecorded(Table table, String range) {
    int seen = 0;
    for (Snapshot s : SinkHistory.whole(table)) {
      if (seen++ == HISTORY) {
        break;
      }
      Map<String, String> m = s.summary();
      if (m != null
          && range.equals(m.get(SnapshotSummaryKeys.GAPS))
          && sinkId.equals(m.get(SnapshotSummaryKeys.GAP_SINK))) {
        return true;
      }
    }
    return false;
  }

  void close() {
    if (admin != null) {
      admin.close();
      admin = null;
    }
  }
}
