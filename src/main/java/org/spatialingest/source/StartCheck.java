package org.spatialingest.source;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumerator;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SinkPositions;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TablePositions;

/**
 * Decides, where the job is built (at every start and every restore), what the table's positions of
 * this sink ({@code sink.id}) mean for the Kafka the job reads now ({@link StartPositions}):
 *
 * <ul>
 *   <li>positions of another Kafka cluster (another cluster id): a start is refused, unless {@code
 *       kafka.reset-positions} says where to start instead; a restore is judged by its state's ids;
 *   <li>a topic created again under its name (another topic id): its old positions do not apply; it
 *       is read from its start (a WARN names both ids; the first commit records the reset). A
 *       restore is judged by the ids its own state records ({@link ResumeFilter}): offsets of the
 *       old topic are refused when the job starts (start without state), offsets of the new one (a
 *       start after the re-creation that committed nothing yet) pass. Created again after this
 *       check, while the job runs: {@link TopicIdGuard} stops it;
 *   <li>the table holds rows of the topic but no positions of this sink can be found: refused
 *       (unless {@code kafka.reset-positions}), never read again from the start;
 *   <li>on a start without state, a position below the first offset Kafka still has: records were
 *       deleted before they were committed; {@code kafka.on-gap: fail} refuses, {@code continue}
 *       goes on and the first commit records the gap.
 * </ul>
 *
 * Positions of formats 1 and 2 do not know their ids: they are applied (INFO); the first commit
 * records the ids.
 */
public final class StartCheck {
  private static final Logger LOG = LoggerFactory.getLogger(StartCheck.class);
  private static final long TIMEOUT_S = 60;

  private StartCheck() {}

  /** The Kafka ids of the job's cluster and topic, asked of the brokers. */
  public static KafkaIds kafkaIds(JobConfig config) {
    try (Admin admin = Admin.create(KafkaClients.properties(config))) {
      String cluster = admin.describeCluster().clusterId().get(TIMEOUT_S, TimeUnit.SECONDS);
      TopicDescription topic =
          admin
              .describeTopics(List.of(config.topic()))
              .allTopicNames()
              .get(TIMEOUT_S, TimeUnit.SECONDS)
              .get(config.topic());
      return new KafkaIds(cluster, Map.of(config.topic(), topic.topicId().toString()));
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot read the Kafka cluster id and the id of topic "
              + config.topic()
              + " at "
              + config.bootstrapServers(),
          e);
    }
  }

  /**
   * @param table the telemetry table
   * @param restore the job restores a savepoint or checkpoint (the source's offsets come from it):
   *     the Kafka ids its state records decide whether its offsets apply ({@link ResumeFilter}
   *     refuses them when the job starts), not those of the table's positions, which a start after
   *     the topic was created again (or with {@code kafka.reset-positions} on another cluster)
   *     leaves as they were until its first commit
   */
  public static StartPositions decide(JobConfig config, Table table, boolean restore) {
    StartPositions recorded = decideRecorded(config, table, restore);
    return restore ? recorded : everyPartition(config, table, recorded);
  }

  /**
   * {@code start} with a position for every partition of the job's topic, resolved now by {@link
   * TableStartingOffsets#resolve}: the recorded ones, an added partition (or a topic created again)
   * from its start, the rest by the starting mode. The source starts there and the sink's first
   * commit records them all, so a partition that delivers nothing still has a position the next
   * start honours, in every mode.
   */
  private static StartPositions everyPartition(
      JobConfig config, Table table, StartPositions start) {
    Set<String> readBefore = new HashSet<>();
    TablePositions.readSink(table, config.sinkId())
        .ifPresent(p -> p.offsets().keySet().forEach(k -> readBefore.add(SourceKeys.topic(k))));
    Map<String, Long> positions = new HashMap<>();
    try (AdminClient admin = AdminClient.create(KafkaClients.properties(config))) {
      List<TopicPartition> partitions = new ArrayList<>();
      admin
          .describeTopics(List.of(config.topic()))
          .allTopicNames()
          .get(TIMEOUT_S, TimeUnit.SECONDS)
          .get(config.topic())
          .partitions()
          .forEach(p -> partitions.add(new TopicPartition(config.topic(), p.partition())));
      TableStartingOffsets.resolve(
              start,
              config,
              readBefore,
              partitions,
              new KafkaSourceEnumerator.PartitionOffsetsRetrieverImpl(admin, config.groupId()))
          .forEach(
              (tp, offset) -> positions.put(SourceKeys.kafka(tp.topic(), tp.partition()), offset));
    } catch (PositionsRefusedException e) {
      throw e;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException(
          "cannot resolve the starting offsets of topic " + config.topic(), e);
    }
    start.positions().forEach(positions::putIfAbsent); // other topics' positions stay
    return new StartPositions(
        start.sinkId(),
        start.ids(),
        positions,
        start.reset(),
        start.notes(),
        start.files(),
        start.filesRecord());
  }

  private static StartPositions decideRecorded(JobConfig config, Table table, boolean restore) {
    KafkaIds ids = kafkaIds(config);
    String sinkId = config.sinkId();
    String reset = config.resetPositions();
    Map<String, String> notes = new LinkedHashMap<>();
    Optional<SinkPositions> found = TablePositions.readSink(table, sinkId);
    if (found.isEmpty()) {
      if (!hasRowsOf(table, config.topic())) {
        return new StartPositions(sinkId, ids, Map.of(), "", notes);
      }
      if (reset.isEmpty()) {
        throw new PositionsRefusedException(
            "Refusing to start: "
                + table.name()
                + " holds rows of topic "
                + config.topic()
                + ", but no positions of sink '"
                + sinkId
                + "' can be found (its snapshots and its tag "
                + TablePositions.tagName(sinkId)
                + " are gone: expired, rolled back or the table replaced), so a start would read the whole "
                + "topic again and commit its records twice. Ways out: restore the job from a savepoint or "
                + "checkpoint; or set kafka.reset-positions (earliest, latest or an ISO-8601 instant) to say "
                + "where to start, recorded in the first commit; or check sink.id (positions are kept per sink "
                + "id; it defaults to kafka.group-id)");
      }
      notes.put(
          SnapshotSummaryKeys.POSITIONS_RESET,
          "no positions of sink " + sinkId + " found; started by kafka.reset-positions=" + reset);
      LOG.warn(
          "No positions of sink {} found in {}, which holds rows of topic {}: starting by kafka.reset-positions={}",
          sinkId,
          table.name(),
          config.topic(),
          reset);
      return new StartPositions(sinkId, ids, Map.of(), reset, notes);
    }
    SinkPositions recorded = found.get();
    boolean namesTopic =
        recorded.offsets().keySet().stream()
            .anyMatch(key -> SourceKeys.topic(key).equals(config.topic()));
    if (recorded.otherCluster(ids) && !namesTopic) {
      // nothing recorded for the topic this job reads (the demo's new topic on a new broker):
      // the other cluster's positions are not applied, and there is nothing to refuse
      LOG.info(
          "The positions of sink {} are of Kafka cluster {} and do not name topic {}; this job reads it on "
              + "cluster {} from where kafka.starting-offsets says",
          sinkId,
          recorded.ids().clusterId(),
          config.topic(),
          ids.clusterId());
      return new StartPositions(sinkId, ids, Map.of(), "", notes);
    }
    if (recorded.otherCluster(ids)) {
      // a restore resumes from its state's offsets: their ids decide, when the job starts
      // (ResumeFilter), so only a start without state needs the reset
      if (!restore && reset.isEmpty()) {
        throw new PositionsRefusedException(
            "Refusing to start: the positions of sink '"
                + sinkId
                + "' in "
                + table.name()
                + " (snapshot "
                + recorded.snapshotId()
                + ") were taken from Kafka cluster "
                + recorded.ids().clusterId()
                + ", but "
                + config.bootstrapServers()
                + " is cluster "
                + ids.clusterId()
                + "; its offsets do not apply here. Ways out: point kafka.bootstrap-servers at cluster "
                + recorded.ids().clusterId()
                + "; or start without state with kafka.reset-positions (earliest, latest or an ISO-8601 "
                + "instant) to start there on this cluster, recorded in the first commit; or use another "
                + "sink.id (or table) for this cluster");
      }
      String how =
          restore
              ? "restored a state of cluster " + ids.clusterId()
              : "started by kafka.reset-positions=" + reset;
      notes.put(
          SnapshotSummaryKeys.POSITIONS_RESET,
          "kafka cluster " + recorded.ids().clusterId() + " -> " + ids.clusterId() + ": " + how);
      LOG.warn(
          "Positions of sink {} are of Kafka cluster {}, the job reads cluster {}: {}{}",
          sinkId,
          recorded.ids().clusterId(),
          ids.clusterId(),
          how,
          restore
              ? " (its offsets apply if they are of that cluster, checked when it starts)"
              : "");
      return new StartPositions(sinkId, ids, Map.of(), restore ? "" : reset, notes);
    }
    if (!reset.isEmpty()) {
      LOG.info(
          "kafka.reset-positions={} is ignored: the positions of sink {} apply to this cluster",
          reset,
          sinkId);
    }
    if (!recorded.knowsCluster()) {
      LOG.info(
          "The positions of sink {} (snapshot {}) were written by an older release and do not name their Kafka "
              + "cluster and topic ids; applied as they are. The first commit records the ids",
          sinkId,
          recorded.snapshotId());
    }
    List<String> resets = new ArrayList<>();
    for (String topic :
        recorded.offsets().keySet().stream().map(SourceKeys::topic).distinct().sorted().toList()) {
      if (recorded.topicRecreated(topic, ids)) {
        LOG.warn(
            "Topic {} was created again: its id was {} when the table's positions were taken and is {} now. Its "
                + "old positions do not apply; {}",
            topic,
            recorded.ids().topicId(topic),
            ids.topicId(topic),
            restore
                ? "the restored state's offsets apply if they are of the new topic, which the job checks "
                    + "when it starts"
                : "it is read from its start");
        resets.add(
            "topic "
                + topic
                + " created again: id "
                + recorded.ids().topicId(topic)
                + " -> "
                + ids.topicId(topic)
                + (restore ? ", restored a state of the new topic" : ", read from its start"));
      }
    }
    if (!resets.isEmpty()) {
      notes.put(SnapshotSummaryKeys.POSITIONS_RESET, String.join("; ", resets));
    }
    Map<String, Long> positions = recorded.applicableTo(ids);
    if (!restore) {
      gaps(config, positions, notes);
    }
    return new StartPositions(sinkId, ids, positions, "", notes);
  }

  /**
   * Positions of the job's topic below the first offset Kafka keeps: {@code fail} refuses, {@code
   * continue} records them in {@code notes}.
   */
  private static void gaps(
      JobConfig config, Map<String, Long> positions, Map<String, String> notes) {
    Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
    positions.forEach(
        (key, offset) -> {
          if (SourceKeys.topic(key).equals(config.topic())) {
            earliest.put(
                new TopicPartition(config.topic(), SourceKeys.partition(key)),
                OffsetSpec.earliest());
          }
        });
    if (earliest.isEmpty()) {
      return;
    }
    Map<TopicPartition, Long> first = new HashMap<>();
    try (Admin admin = Admin.create(KafkaClients.properties(config))) {
      admin
          .listOffsets(earliest)
          .all()
          .get(TIMEOUT_S, TimeUnit.SECONDS)
          .forEach((tp, info) -> first.put(tp, info.offset()));
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot read the first offsets of topic " + config.topic() + " to check for gaps", e);
    }
    List<Gap> gaps = new ArrayList<>();
    first.forEach(
        (tp, available) -> {
          long position = positions.get(SourceKeys.kafka(tp.topic(), tp.partition()));
          if (position < available) {
            gaps.add(new Gap(tp.topic(), tp.partition(), position, available));
          }
        });
    if (gaps.isEmpty()) {
      return;
    }
    gaps.sort(java.util.Comparator.comparingInt(Gap::partition));
    if (config.onGap() == JobConfig.OnGap.FAIL) {
      throw new PositionsRefusedException(
          "Refusing to start: records the table never committed were deleted from Kafka (retention or "
              + "kafka-delete-records): "
              + String.join("; ", gaps.stream().map(Gap::describe).toList())
              + ". Ways out: set kafka.on-gap: continue to go on from the first available offsets (each gap is "
              + "recorded in the snapshot summary and shown by inspect), after replaying the lost records from "
              + "elsewhere if they exist");
    }
    gaps.forEach(
        g ->
            LOG.warn(
                "{}; kafka.on-gap is continue: going on from {}", g.describe(), g.available()));
    notes.put(SnapshotSummaryKeys.GAPS, String.join(",", gaps.stream().map(Gap::range).toList()));
    notes.put(
        SnapshotSummaryKeys.GAP_RECORDS, Long.toString(gaps.stream().mapToLong(Gap::lost).sum()));
  }

  /** Records {@code missing}..{@code available - 1} of a partition are gone. */
  record Gap(String topic, int partition, long missing, long available) {
    long lost() {
      return available - missing;
    }

    String range() {
      return SourceKeys.kafka(topic, partition) + ":" + missing + ".." + (available - 1);
    }

    String describe() {
      return KafkaGapGuard.describe(topic, partition, missing, available);
    }
  }

  /** Whether the table holds a row of a partition of {@code topic}. */
  private static boolean hasRowsOf(Table table, String topic) {
    if (table.currentSnapshot() == null) {
      return false;
    }
    try (CloseableIterable<Record> rows =
        IcebergGenerics.read(table)
            .select("source")
            .where(Expressions.startsWith("source", SourceKeys.kafkaPrefix(topic)))
            .build()) {
      for (Record r : rows) {
        Object source = r.getField("source");
        if (source != null && source.toString().startsWith(SourceKeys.kafkaPrefix(topic))) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
