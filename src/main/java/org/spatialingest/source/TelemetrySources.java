package org.spatialingest.source;

import java.util.Properties;
import java.util.Set;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.enumerate.DefaultFileFilter;
import org.apache.flink.connector.file.src.enumerate.FileEnumerator;
import org.apache.flink.connector.file.src.enumerate.NonSplittingRecursiveEnumerator;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.fs.Path;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.StartPositions;

/**
 * Builds the sources from the job configuration: Kafka (offsets in Flink checkpoints, exactly-once)
 * or, for {@code source: file:<path>}, a bounded file source for backfill and replay (a file or a
 * directory, read recursively; hidden files starting with {@code .} or {@code _} are skipped).
 */
public final class TelemetrySources {
  private TelemetrySources() {}

  /**
   * The Kafka source in its guards (access, gaps: {@link KafkaGapGuard}, a topic created again:
   * {@link TopicIdGuard}), wrapped in the admission cap when one is configured.
   *
   * @param bounded stop at the offsets that are latest when the job starts (tests and backfills);
   *     otherwise unbounded
   */
  public static Source<SourceRecord, ?, ?> source(
      JobConfig config, boolean bounded, StartPositions start) {
    Source<SourceRecord, ?, ?> guarded =
        KafkaAccessGuard.of(
            RestoredBoundedSource.of(kafka(config, bounded, start))); // FLINK-31006 when bounded
    Source<SourceRecord, ?, ?> kafka =
        config.onGap() == JobConfig.OnGap.CONTINUE
            ? KafkaGapGuard.recording(
                guarded,
                KafkaClients.connection(config),
                org.spatialingest.table.Catalogs.tableLoader(config),
                config.sinkId())
            : KafkaGapGuard.of(guarded, KafkaClients.connection(config));
    // outside the gap guard: an out-of-range offset on a topic created again is told as that
    kafka = TopicIdGuard.of(kafka, KafkaClients.connection(config), start.ids());
    return admitted(kafka, config);
  }

  /**
   * A file source that hands out at most {@code source.file.max-files-per-checkpoint} files and
   * about {@code source.file.max-bytes-per-checkpoint} bytes between two completed checkpoints
   * ({@link CheckpointShareSource}); {@code files} itself when neither is set.
   */
  public static Source<SourceRecord, FileSourceSplit, ?> checkpointShares(
      FileSource<SourceRecord> files, JobConfig config) {
    int maxFiles = config.input().maxFilesPerCheckpoint();
    long maxBytes = config.input().maxBytesPerCheckpoint();
    if (maxFiles <= 0 && maxBytes <= 0) {
      return files;
    }
    return new CheckpointShareSource<>(files, maxFiles, maxBytes, FileSourceSplit::length);
  }

  /**
   * {@code source} in the admission cap ({@code admission.max-records-per-second}, {@code
   * -bytes-per-second}, per reader subtask) when one is configured, a Kafka or a file source alike;
   * {@code source} itself otherwise.
   */
  public static <SplitT extends SourceSplit, EnumT> Source<SourceRecord, SplitT, EnumT> admitted(
      Source<SourceRecord, SplitT, EnumT> source, JobConfig config) {
    if (config.maxRecordsPerSecond() <= 0 && config.maxBytesPerSecond() <= 0) {
      return source;
    }
    return new AdmissionControlledSource<>(
        source,
        config.maxRecordsPerSecond(),
        config.maxBytesPerSecond(),
        record -> record.value.length);
  }

  /**
   * @param bounded stop at the offsets that are latest when the job starts (tests and backfills);
   *     otherwise unbounded
   */
  public static KafkaSource<SourceRecord> kafka(JobConfig config, boolean bounded) {
    return kafka(config, bounded, StartPositions.none(config.sinkId()));
  }

  /**
   * @param bounded stop at the offsets that are latest when the job starts (tests and backfills);
   *     otherwise unbounded
   * @param start where a start without state begins ({@link StartCheck#decide})
   */
  public static KafkaSource<SourceRecord> kafka(
      JobConfig config, boolean bounded, StartPositions start) {
    Properties props = KafkaClients.consumerProperties(config);
    // the group's offsets are the table's positions, published after each commit
    // (KafkaGroupOffsets); the source's own
    // commits would run ahead of the table by up to the freshness bound
    props.put("commit.offsets.on.checkpoint", "false");
    KafkaSourceBuilder<SourceRecord> builder =
        KafkaSource.<SourceRecord>builder()
            .setBootstrapServers(config.bootstrapServers())
            .setTopics(config.topic())
            .setGroupId(config.groupId())
            .setProperties(props)
            .setStartingOffsets(new TableStartingOffsets(start, config))
            .setDeserializer(new SourceRecordDeserializer());
    if (bounded) {
      builder.setBounded(OffsetsInitializer.latest());
    }
    return builder.build();
  }

  /**
   * Newline-delimited records of the file or directory {@code path}; bounded (ends when every file
   * is read).
   */
  public static FileSource<SourceRecord> file(String path) {
    return file(path, org.spatialingest.table.FileInputs.none());
  }

  /**
   * The same, reading of each file the prefix {@code plan} fixed at the start check ({@link
   * FileStartCheck}).
   */
  public static FileSource<SourceRecord> file(
      String path, org.spatialingest.table.FileInputs plan) {
    return file(path, plan, Set.of());
  }

  /**
   * The same without the files {@code committedWhole} names ({@link FileStartCheck#committedWhole}:
   * every line this run would read of them is committed): they are not handed to the readers. The
   * enumerator lists the input as Flink's does, skipping those paths too.
   */
  public static FileSource<SourceRecord> file(
      String path, org.spatialingest.table.FileInputs plan, Set<String> committedWhole) {
    return FileSource.forBulkFileFormat(new LineRecordFormat(plan), new Path(path))
        .setFileEnumerator(files(committedWhole))
        .build();
  }

  /**
   * The files of a file input as the file source lists them (Flink's listing: hidden files and
   * directories skipped, not split), without the paths {@code committedWhole}.
   */
  public static FileEnumerator.Provider files(Set<String> committedWhole) {
    if (committedWhole.isEmpty()) {
      return FileSource.DEFAULT_NON_SPLITTABLE_FILE_ENUMERATOR;
    }
    Set<String> skip = Set.copyOf(committedWhole);
    return () -> {
      DefaultFileFilter hidden = new DefaultFileFilter();
      return new NonSplittingRecursiveEnumerator(
          p -> hidden.test(p) && !skip.contains(p.toString()));
    };
  }
}
