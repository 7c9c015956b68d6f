package org.spatialingest.sizing;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The cluster {@code plan} prints for a target rate: slots per operator, TaskManagers, the memory
 * budget per writer, files and commits per hour, staging objects per second, metadata per day, and
 * which of these limits first. Pure arithmetic over {@link MeasuredCosts} and {@link BatchPlan}; no
 * I/O.
 *
 * <ul>
 *   <li>Parallelism of a CPU-bound stage: {@code ceil(rate * µs per record / 1e6 / u)}, u = {@link
 *       #TARGET_UTILIZATION}. The source chain (source, resume filter, parse, transform, range
 *       assignment) is one stage; the writers another. The aggregator runs at parallelism 1.
 *   <li>Slots: Flink shares one slot among one subtask of every operator, so the job needs as many
 *       slots as its widest operator; TaskManagers {@code ceil(slots / slots per TaskManager)}.
 *   <li>Staging objects: at every checkpoint each writer stages, per partition buffer that received
 *       rows, one run: {@code writers * partitions / C} per second at most.
 *   <li>Metadata: each commit writes a manifest and a manifest list and adds a snapshot entry to
 *       {@code metadata.json} ({@link MeasuredCosts}, measured with one data file per commit).
 *   <li>Limits: the source cannot read a partition from two subtasks, so the topic's partitions cap
 *       the source chain; staging runs share the table's prefix, whose PUT rate an object store
 *       caps; the aggregator and committer (parallelism 1, one thread each) pass a commit's files
 *       within one C, at {@link MeasuredCosts#COMMIT_PATH_MICROS_PER_FILE} each.
 * </ul>
 */
public record ClusterPlan(
    MeasuredCosts costs,
    double recordsPerSecond,
    int slotsPerTaskManager,
    Integer kafkaPartitions,
    int sourceParallelism,
    int writerParallelism,
    int slots,
    int taskManagers,
    double cores,
    BatchPlan batches,
    double commitsPerHour,
    double filesPerHour,
    double stagingObjectsPerSecond,
    double metadataBytesPerDay,
    List<Limit> limits) {

  /**
   * CPU share a stage is sized for: the rest is the headroom that drains a backlog after a restart
   * (at 0.7 the job reads 1.43× the rate, so an outage of t seconds drains in about 2.3 t).
   */
  public static final double TARGET_UTILIZATION = 0.7;

  /**
   * Object PUTs per second one S3 prefix accepts before throttling (AWS documents 3,500 PUT per
   * second per partitioned prefix); staging runs share the table's data prefix.
   */
  public static final double OBJECT_PUTS_PER_SECOND = 3_500;

  private static final String COMMIT_PATH = "commit path (p = 1)";

  /** One of the plan's quantities against what caps it; {@code share} = used / cap. */
  public record Limit(String name, double used, double cap, String what) {
    public double share() {
      return cap > 0 ? used / cap : Double.POSITIVE_INFINITY;
    }
  }

  /**
   * Derives the cluster.
   *
   * @param costs measured CPU per record of the workload
   * @param bufferedBytesPerRecord b, as {@code plan} measured or was told
   * @param encodedBytesPerRecord e, as {@code plan} measured or was told
   * @param recordsPerSecond the target rate, &gt; 0
   * @param bounds M, T, L, C
   * @param minWriters writers asked for ({@code --writers}); more if the CPU needs them
   * @param partitionsPerCommit partitions each writer writes per commit
   * @param slotsPerTaskManager {@code taskmanager.numberOfTaskSlots}, &ge; 1
   * @param kafkaPartitions the topic's partitions, or null when unknown
   */
  public static ClusterPlan derive(
      MeasuredCosts costs,
      double bufferedBytesPerRecord,
      double encodedBytesPerRecord,
      double recordsPerSecond,
      SizingBounds bounds,
      int minWriters,
      int partitionsPerCommit,
      int slotsPerTaskManager,
      Integer kafkaPartitions) {
    if (!(recordsPerSecond > 0) || !Double.isFinite(recordsPerSecond)) {
      throw new IllegalArgumentException(
          "the cluster needs a rate > 0 records/s, was " + recordsPerSecond);
    }
    if (slotsPerTaskManager < 1) {
      throw new IllegalArgumentException(
          "--slots-per-taskmanager must be >= 1, was " + slotsPerTaskManager);
    }
    if (kafkaPartitions != null && kafkaPartitions < 1) {
      throw new IllegalArgumentException("--kafka-partitions must be >= 1, was " + kafkaPartitions);
    }
    double transformCores = recordsPerSecond * costs.transformMicrosPerRecord() / 1e6;
    double sinkCores = recordsPerSecond * costs.sinkMicrosPerRecord() / 1e6;
    int source = parallelism(transformCores);
    int writers = Math.max(minWriters, parallelism(sinkCores));
    BatchPlan batches =
        BatchPlan.derive(
            bufferedBytesPerRecord,
            encodedBytesPerRecord,
            recordsPerSecond,
            bounds,
            writers,
            partitionsPerCommit);
    int slots = Math.max(source, writers);
    int taskManagers = (int) Math.ceil((double) slots / slotsPerTaskManager);
    double commitsPerHour = 3_600 / batches.commitIntervalSeconds();
    double filesPerHour = batches.filesPerDay() / 24;
    double checkpointSeconds = bounds.checkpointInterval().toMillis() / 1_000.0;
    double stagingPerSecond = (double) writers * partitionsPerCommit / checkpointSeconds;
    double metadataPerDay =
        commitsPerHour
            * 24
            * (MeasuredCosts.MANIFEST_BYTES
                + MeasuredCosts.MANIFEST_LIST_BYTES
                + MeasuredCosts.SNAPSHOT_ENTRY_BYTES);

    List<Limit> limits = new ArrayList<>();
    if (kafkaPartitions != null) {
      limits.add(
          new Limit(
              "kafka partitions",
              source,
              kafkaPartitions,
              "source subtasks needed vs the topic's partitions (a source subtask reads whole"
                  + " partitions)"));
    }
    limits.add(
        new Limit(
            "staging PUTs",
            stagingPerSecond,
            OBJECT_PUTS_PER_SECOND,
            "staging objects per second vs one S3 prefix's PUT rate"));
    // the files of a commit all close at one checkpoint in the worst case, and the p = 1 operators
    // must pass them on before the next one
    double filesPerCommit = filesPerHour / commitsPerHour;
    limits.add(
        new Limit(
            COMMIT_PATH,
            filesPerCommit * MeasuredCosts.COMMIT_PATH_MICROS_PER_FILE / 1e6,
            checkpointSeconds,
            "seconds of one core the aggregator and committer spend on a commit's files vs C"));
    limits.sort(Comparator.comparingDouble(Limit::share).reversed());
    return new ClusterPlan(
        costs,
        recordsPerSecond,
        slotsPerTaskManager,
        kafkaPartitions,
        source,
        writers,
        slots,
        taskManagers,
        transformCores + sinkCores,
        batches,
        commitsPerHour,
        filesPerHour,
        stagingPerSecond,
        metadataPerDay,
        List.copyOf(limits));
  }

  private static int parallelism(double cores) {
    return Math.max(1, (int) Math.ceil(cores / TARGET_UTILIZATION));
  }

  /** The plan as {@code plan} prints it, one line each. */
  public List<String> lines() {
    List<String> out = new ArrayList<>();
    out.add(
        String.format(
            Locale.ROOT,
            "cluster for %,.0f records/s (%s: %.1f µs/record source chain + %.1f µs/record sink,"
                + " measured; stages sized to %.0f %% CPU)",
            recordsPerSecond,
            costs.cliName(),
            costs.transformMicrosPerRecord(),
            costs.sinkMicrosPerRecord(),
            TARGET_UTILIZATION * 100));
    out.add(
        String.format(
            Locale.ROOT,
            "  slots per operator    source chain %d, writer %d, aggregator 1, committer %d",
            sourceParallelism,
            writerParallelism,
            writerParallelism));
    out.add(
        String.format(
            Locale.ROOT,
            "  TaskManagers          %d x %d slots (%d slots; %.1f cores busy, %.1f per TaskManager)",
            taskManagers,
            slotsPerTaskManager,
            slots,
            cores,
            cores / taskManagers));
    out.add(
        String.format(
            Locale.ROOT,
            "  M per writer          %s (binding: %s)",
            Units.formatSize(batches.bounds().memoryBytes()),
            batches.bindingConstraint().jsonName()));
    out.add(
        String.format(
            Locale.ROOT,
            "  commits per hour      %.0f; files per hour %,.0f of %.1f MB",
            commitsPerHour,
            filesPerHour,
            batches.expectedFileMb()));
    out.add(String.format(Locale.ROOT, "  staging objects/s     %.1f", stagingObjectsPerSecond));
    out.add(
        String.format(
            Locale.ROOT,
            "  metadata per day      %.1f MB before snapshot expiry",
            metadataBytesPerDay / 1e6));
    Limit commitPath =
        limits.stream().filter(l -> l.name().equals(COMMIT_PATH)).findFirst().orElseThrow();
    out.add(
        String.format(
            Locale.ROOT,
            "  commit path (p = 1)   %.2f s of CPU per commit of %,.0f files, %.0f %% of C",
            commitPath.used(),
            filesPerHour / commitsPerHour,
            commitPath.share() * 100));
    Limit first = limits.get(0);
    out.add(
        String.format(
            Locale.ROOT,
            "  limits first          %s: %,.1f of %,.0f, %.0f %% (%s)",
            first.name(),
            first.used(),
            first.cap(),
            first.share() * 100,
            first.what()));
    return out;
  }
}
