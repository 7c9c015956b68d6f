package org.spatialingest.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.config.JobConfig;
import org.spatialingest.config.JobOption;
import org.spatialingest.config.JobOptions;
import org.spatialingest.sizing.BatchPlan;
import org.spatialingest.sizing.ClusterPlan;
import org.spatialingest.sizing.MeasuredCosts;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.sizing.Units;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code plan}: derives batch size, binding constraint, commit interval, file size and files per
 * day from bytes per record, the input rate and the sink bounds, and prints the job and Flink
 * settings that go with them. The math is {@link BatchPlan}; this class only reads inputs and
 * prints.
 */
@Command(
    name = "plan",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Size the sink: rows per batch, which bound closes a batch (memory, file_size or latency), commit interval,"
          + " expected file size and files per day, plus the matching config.",
      "Sizes given with -mb flags are decimal megabytes (10^6 bytes)."
    },
    defaultValueProvider = PlanCommand.JobDefaults.class,
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:plan printed",
      "2:bad flag or unusable sample (missing, empty, or no record parses)",
      "3:runtime failure (e.g. Kafka unreachable)"
    })
public final class PlanCommand implements Callable<Integer> {
  /**
   * The defaults of the sink's bounds are the job's ({@link JobOptions}, the one owner of each
   * key's default), so {@code plan} without those flags sizes the job as it runs by default.
   */
  static final class JobDefaults implements IDefaultValueProvider {
    @Override
    public String defaultValue(ArgSpec arg) {
      if (!(arg instanceof OptionSpec option)) {
        return null;
      }
      return switch (option.longestName()) {
        case "--memory-mb" -> megabytes(JobOptions.SINK_MEMORY_BUDGET);
        case "--target-file-mb" -> megabytes(JobOptions.SINK_TARGET_FILE_SIZE);
        case "--max-latency" -> JobOptions.SINK_MAX_LATENCY.defaultValue();
        case "--checkpoint-interval" -> JobOptions.CHECKPOINT_INTERVAL.defaultValue();
        default -> null;
      };
    }

    /** A size key's default in the decimal megabytes of the {@code -mb} flags. */
    private static String megabytes(JobOption<Long> size) {
      return BigDecimal.valueOf(Units.parseBytes(size.defaultValue()))
          .movePointLeft(6)
          .stripTrailingZeros()
          .toPlainString();
    }
  }

  /** {@code encodedBytesSource} when only buffered bytes per record are known. */
  static final String ENCODED_ASSUMED = "assumed-equal-to-buffered";

  /** Where bytes per record come from; exactly one. */
  static final class RecordSizeSource {
    @Option(
        names = "--sample",
        paramLabel = "FILE",
        description =
            "Newline-delimited JSON records of the record contract. Each is parsed like the job does;"
                + " bytes/record = what the sink buffers (serialized row + per-row overhead), encoded bytes/record ="
                + " Parquet bytes of the rows written through the sink's file writer / rows.")
    Path sample;

    @Option(
        names = "--bytes-per-record",
        paramLabel = "B",
        description = "Serialized bytes per record as the sink buffers it.")
    Double bytesPerRecord;

    @ArgGroup(exclusive = false, multiplicity = "1")
    TopicSource topic;
  }

  /**
   * A sample read from Kafka: the newest records, read without a consumer group and without
   * committing.
   */
  static final class TopicSource {
    @Option(
        names = "--topic",
        required = true,
        paramLabel = "TOPIC",
        description =
            "Sample the newest records of this topic (measured like --sample); also estimates the rate.")
    String topic;

    @Option(
        names = "--bootstrap",
        required = true,
        paramLabel = "HOST:PORT",
        description = "Kafka bootstrap servers.")
    String bootstrap;

    @Option(
        names = "--sample-records",
        paramLabel = "N",
        defaultValue = "1000",
        description =
            "Records to read, newest first, spread over the partitions. Default: ${DEFAULT-VALUE}.")
    int sampleRecords;

    @Option(
        names = "--rate-window",
        paramLabel = "DURATION",
        defaultValue = "5m",
        converter = CliConverters.DurationConverter.class,
        description =
            "Rate = records between now-window and the end offsets / window. Default: ${DEFAULT-VALUE}.")
    Duration rateWindow;

    @Option(
        names = "--consumer-property",
        paramLabel = "KEY=VALUE",
        description =
            "Extra Kafka consumer property (e.g. security.protocol=SSL), on top of the kafka.properties.* of"
                + " --config/--set; repeatable. group.id is refused.")
    List<String> consumerProperties = new ArrayList<>();
  }

  @Spec CommandSpec spec;

  @ArgGroup(exclusive = true, multiplicity = "1")
  RecordSizeSource recordSize;

  /**
   * With --sample/--topic: the job's configuration, which parses the records and defines the table
   * they are sized for.
   */
  @Mixin CatalogOptions job;

  @Option(
      names = "--encoded-bytes-per-record",
      paramLabel = "E",
      description =
          "Parquet bytes per record. Default: equal to the buffered bytes (no compression assumed).")
  Double encodedBytesPerRecord;

  @Option(
      names = "--rate",
      paramLabel = "R",
      description =
          "Total input rate, records/s (>= 0). Required unless --topic estimates it; overrides that.")
  Double rateFlag;

  @Option(
      names = "--memory-mb",
      paramLabel = "MB",
      description =
          "Memory budget per writer subtask (sink.memory-budget), MB. Default: ${DEFAULT-VALUE}.")
  double memoryMb;

  @Option(
      names = "--target-file-mb",
      paramLabel = "MB",
      description = "Target data file size (sink.target-file-size), MB. Default: ${DEFAULT-VALUE}.")
  double targetFileMb;

  @Option(
      names = "--max-latency",
      paramLabel = "DURATION",
      converter = CliConverters.DurationConverter.class,
      description = "Freshness bound L (sink.max-latency). Default: ${DEFAULT-VALUE}.")
  Duration maxLatency;

  @Option(
      names = "--checkpoint-interval",
      paramLabel = "DURATION",
      converter = CliConverters.DurationConverter.class,
      description =
          "Checkpoint interval C; commits happen only at checkpoints. Default: ${DEFAULT-VALUE}.")
  Duration checkpointInterval;

  @Option(
      names = "--writers",
      paramLabel = "N",
      defaultValue = "1",
      description = "Writer subtasks (sink parallelism). Default: ${DEFAULT-VALUE}.")
  int writers;

  @Option(
      names = "--partitions-per-commit",
      paramLabel = "N",
      defaultValue = "1",
      description = "Table partitions each writer writes per commit. Default: ${DEFAULT-VALUE}.")
  int partitionsPerCommit;

  @Option(
      names = "--workload",
      paramLabel = "KIND",
      defaultValue = "points",
      description =
          "Measured CPU cost per record the cluster is sized with: points or mix (see scale.md)."
              + " Default: ${DEFAULT-VALUE}.")
  String workload;

  @Option(
      names = "--slots-per-taskmanager",
      paramLabel = "N",
      defaultValue = "4",
      description = "taskmanager.numberOfTaskSlots of the cluster. Default: ${DEFAULT-VALUE}.")
  int slotsPerTaskManager;

  @Option(
      names = "--kafka-partitions",
      paramLabel = "N",
      description = "The topic's partitions (they cap the source); --topic reads them.")
  Integer kafkaPartitions;

  @Option(names = "--json", description = "Print JSON instead of text.")
  boolean json;

  @Option(
      names = "--write-derivation",
      paramLabel = "DIR",
      description =
          "Also write DIR/sizing.yaml, DIR/flink-conf-sizing.yaml and DIR/derivation.json.")
  Path derivationDir;

  /** Injected for tests; the derivation's date. */
  Clock clock = Clock.systemUTC();

  @Override
  public Integer call() throws IOException {
    SizingBounds bounds = bounds();
    requireAtLeast("--writers", writers, 1);
    requireAtLeast("--partitions-per-commit", partitionsPerCommit, 1);
    if (rateFlag != null && (!(rateFlag >= 0) || !Double.isFinite(rateFlag))) {
      throw usage("--rate must be a number >= 0 records/s, was " + rateFlag);
    }
    if (rateFlag == null && recordSize.topic == null) {
      throw usage("--rate is required (only --topic can estimate it)");
    }
    if (recordSize.topic != null) {
      requireAtLeast("--sample-records", recordSize.topic.sampleRecords, 1);
      if (recordSize.topic.rateWindow.isZero() || recordSize.topic.rateWindow.isNegative()) {
        throw usage("--rate-window must be > 0");
      }
    }
    if (recordSize.bytesPerRecord != null && (job.config != null || !job.overrides.isEmpty())) {
      throw usage(
          "--config and --set apply only with --sample or --topic (they say how the records parse)");
    }
    if (encodedBytesPerRecord != null
        && !(encodedBytesPerRecord > 0 && Double.isFinite(encodedBytesPerRecord))) {
      throw usage("--encoded-bytes-per-record must be > 0, was " + encodedBytesPerRecord);
    }

    Inputs in = inputs();
    BatchPlan plan;
    try {
      plan =
          BatchPlan.derive(in.buffered, in.encoded, in.rate, bounds, writers, partitionsPerCommit);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }

    ClusterPlan cluster = cluster(in);
    int writersUsed = writers;
    if (cluster != null && cluster.writerParallelism() > writers) {
      // the batches follow the writers the rate needs, not fewer
      writersUsed = cluster.writerParallelism();
      plan = cluster.batches();
    }
    ObjectNode result = toJson(plan, in);
    if (cluster != null) {
      result.set("cluster", clusterJson(cluster));
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(mapper().writeValueAsString(result));
    } else {
      if (writersUsed != writers) {
        out.printf(
            Locale.ROOT,
            "writers                 %d (the CPU at this rate needs %d; --writers was %d)%n",
            writersUsed,
            writersUsed,
            writers);
      }
      printText(out, plan, in, writersUsed);
      if (cluster != null) {
        out.println();
        cluster.lines().forEach(out::println);
      }
    }
    if (derivationDir != null) {
      writeDerivation(plan, in, writersUsed, result);
      if (!json) {
        out.println(
            "wrote "
                + derivationDir.resolve("sizing.yaml")
                + ", "
                + derivationDir.resolve("flink-conf-sizing.yaml")
                + " and "
                + derivationDir.resolve("derivation.json"));
      }
    }
    out.flush();
    return Main.EXIT_OK;
  }

  /** {@code encodedBytesSource} of a sample encoded through the sink's Parquet writer. */
  static final String ENCODED_MEASURED = "measured-parquet";

  private record Inputs(
      double buffered,
      double encoded,
      String encodedSource,
      String source,
      Long sampleSize,
      double rate,
      String rateSource,
      PlanSampling.Measured measured) {}

  private Inputs inputs() throws IOException {
    if (recordSize.bytesPerRecord != null) {
      double b = recordSize.bytesPerRecord;
      if (!(b > 0) || !Double.isFinite(b)) {
        throw usage("--bytes-per-record must be > 0, was " + b);
      }
      return encodedBytesPerRecord != null
          ? new Inputs(b, encodedBytesPerRecord, "flag", "flag", null, rateFlag, "flag", null)
          : new Inputs(b, b, ENCODED_ASSUMED, "flag", null, rateFlag, "flag", null);
    }
    boolean encode = encodedBytesPerRecord == null;
    PlanSampling.Measured m;
    String flag = recordSize.sample != null ? "--sample" : "--topic";
    JobConfig jobConfig = job.jobConfig(null);
    try {
      if (recordSize.sample != null) {
        m = PlanSampling.fromFile(recordSize.sample, encode, jobConfig);
      } else {
        TopicSource t = recordSize.topic;
        m =
            PlanSampling.fromTopic(
                t.bootstrap,
                t.topic,
                t.sampleRecords,
                t.rateWindow,
                ConfigLoader.parseOverrides(t.consumerProperties),
                encode,
                jobConfig);
      }
    } catch (IllegalArgumentException e) {
      throw usage(flag + ": " + e.getMessage());
    }
    double r;
    String rateSource;
    if (rateFlag != null) {
      r = rateFlag;
      rateSource = "flag";
    } else if (m.topic().recordsInWindow() > 0) {
      r = m.topic().offsetsRate();
      rateSource = "kafka-offsets";
    } else if (Double.isFinite(m.topic().sampleTimestampsRate())) {
      r = m.topic().sampleTimestampsRate();
      rateSource = "sample-timestamps";
    } else {
      throw usage(
          "--topic: no records in the last "
              + Units.formatDuration(recordSize.topic.rateWindow)
              + " and too few sampled timestamps to estimate the rate; give --rate");
    }
    double encoded = encode ? m.encodedBytesPerRecord().getAsDouble() : encodedBytesPerRecord;
    return new Inputs(
        m.bufferedBytesPerRecord(),
        encoded,
        encode ? ENCODED_MEASURED : "flag",
        m.source(),
        m.parsed(),
        r,
        rateSource,
        m);
  }

  /** The cluster for the rate, or null at rate 0 (nothing to size). */
  private ClusterPlan cluster(Inputs in) {
    MeasuredCosts costs;
    try {
      costs = MeasuredCosts.of(workload);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
    if (in.rate == 0) {
      return null;
    }
    Integer partitions = kafkaPartitions;
    if (partitions == null && in.measured != null && in.measured.topic() != null) {
      partitions = in.measured.topic().partitions();
    }
    try {
      return ClusterPlan.derive(
          costs,
          in.buffered,
          in.encoded,
          in.rate,
          bounds(),
          writers,
          partitionsPerCommit,
          slotsPerTaskManager,
          partitions);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
  }

  private static ObjectNode clusterJson(ClusterPlan c) {
    ObjectNode o = mapper().createObjectNode();
    o.put("workload", c.costs().cliName());
    o.put("sourceChainMicrosPerRecord", round3(c.costs().transformMicrosPerRecord()));
    o.put("sinkMicrosPerRecord", round3(c.costs().sinkMicrosPerRecord()));
    o.put("sourceParallelism", c.sourceParallelism());
    o.put("writerParallelism", c.writerParallelism());
    o.put("slots", c.slots());
    o.put("slotsPerTaskManager", c.slotsPerTaskManager());
    o.put("taskManagers", c.taskManagers());
    o.put("cores", round3(c.cores()));
    o.put("memoryPerWriterBytes", c.batches().bounds().memoryBytes());
    o.put("commitsPerHour", round3(c.commitsPerHour()));
    o.put("filesPerHour", round3(c.filesPerHour()));
    o.put("expectedFileMb", round3(c.batches().expectedFileMb()));
    o.put("stagingObjectsPerSecond", round3(c.stagingObjectsPerSecond()));
    o.put("metadataBytesPerDay", Math.round(c.metadataBytesPerDay()));
    var limits = o.putArray("limits");
    for (ClusterPlan.Limit l : c.limits()) {
      ObjectNode n = limits.addObject();
      n.put("name", l.name());
      n.put("used", round3(l.used()));
      n.put("cap", round3(l.cap()));
      n.put("share", round3(l.share()));
    }
    return o;
  }

  private SizingBounds bounds() {
    long memory = mbFlag("--memory-mb", memoryMb);
    long target = mbFlag("--target-file-mb", targetFileMb);
    if (maxLatency.isZero() || maxLatency.isNegative()) {
      throw usage("--max-latency must be > 0, was " + Units.formatDuration(maxLatency));
    }
    if (checkpointInterval.isZero() || checkpointInterval.isNegative()) {
      throw usage(
          "--checkpoint-interval must be > 0, was " + Units.formatDuration(checkpointInterval));
    }
    return new SizingBounds(memory, target, maxLatency, checkpointInterval);
  }

  private long mbFlag(String flag, double mb) {
    if (!(mb > 0) || !Double.isFinite(mb) || Units.megabytesToBytes(mb) <= 0) {
      throw usage(flag + " must be > 0 MB, was " + mb);
    }
    return Units.megabytesToBytes(mb);
  }

  private ObjectNode toJson(BatchPlan plan, Inputs in) {
    ObjectNode o = mapper().createObjectNode();
    o.put("bytesPerRecord", in.buffered);
    o.put("encodedBytesPerRecord", in.encoded);
    o.put("encodedBytesSource", in.encodedSource);
    o.put("source", in.source);
    if (in.sampleSize != null) {
      o.put("sampleSize", in.sampleSize);
    }
    o.put("recordsPerSecond", in.rate);
    o.put("rateSource", in.rateSource);
    if (in.measured != null) {
      PlanSampling.Measured m = in.measured;
      o.put("recordsRead", m.recordsRead());
      o.put("parseFailures", m.recordsRead() - m.parsed());
      ObjectNode byReason = o.putObject("parseFailuresByReason");
      m.rejectsByReason().forEach(byReason::put);
      if (m.encodedBytesPerRecord().isPresent()) {
        o.put("encodedFiles", m.encodedFiles());
        o.put("encodedFileBytes", m.encodedFileBytes());
      }
      if (m.topic() != null) {
        ObjectNode t = o.putObject("topic");
        t.put("partitions", m.topic().partitions());
        ObjectNode per = t.putObject("sampledPerPartition");
        m.topic().perPartition().forEach((k, v) -> per.put(Integer.toString(k), v));
        putNumber(t, "rateWindowSeconds", m.topic().windowSeconds());
        t.put("recordsInWindow", m.topic().recordsInWindow());
        t.put("offsetsRate", round3(m.topic().offsetsRate()));
        if (Double.isFinite(m.topic().sampleTimestampsRate())) {
          t.put("sampleTimestampsRate", round3(m.topic().sampleTimestampsRate()));
        } else {
          t.putNull("sampleTimestampsRate");
        }
      }
    }
    o.put("rowsByMemory", plan.rowsByMemory());
    o.put("rowsByFile", plan.rowsByFile());
    o.put("rowsByTime", plan.rowsByTime());
    o.put("rowsPerBatch", plan.rowsPerBatch());
    putNumber(o, "commitIntervalSeconds", plan.commitIntervalSeconds());
    o.put("expectedFileMb", round3(plan.expectedFileMb()));
    o.put("bindingConstraint", plan.bindingConstraint().jsonName());
    o.put("filesPerDay", Math.round(plan.filesPerDay()));
    o.put("advice", plan.advice());
    ObjectNode config = o.putObject("config");
    ObjectNode job = config.putObject("job");
    jobConfig(plan).forEach(job::put);
    ObjectNode flink = config.putObject("flinkConf");
    flinkConfig(plan).forEach(flink::put);
    return o;
  }

  static Map<String, String> jobConfig(BatchPlan plan) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("sink.memory-budget", Units.formatSize(plan.bounds().memoryBytes()));
    m.put("sink.target-file-size", Units.formatSize(plan.bounds().targetFileBytes()));
    m.put("sink.max-latency", Units.formatDuration(plan.bounds().maxLatency()));
    m.put("checkpoint.interval", Units.formatDuration(plan.bounds().checkpointInterval()));
    return m;
  }

  static Map<String, String> flinkConfig(BatchPlan plan) {
    return Map.of(
        "execution.checkpointing.interval",
        Units.formatDuration(plan.bounds().checkpointInterval()));
  }

  private void printText(PrintWriter out, BatchPlan plan, Inputs in, int writersUsed) {
    String sample =
        in.sampleSize != null
            ? " (" + in.source + ", " + in.sampleSize + " records)"
            : " (" + in.source + ")";
    out.printf(Locale.ROOT, "bytes/record buffered   %.1f%s%n", in.buffered, sample);
    out.printf(Locale.ROOT, "bytes/record encoded    %.1f (%s)%n", in.encoded, in.encodedSource);
    if (in.measured != null) {
      PlanSampling.Measured m = in.measured;
      out.printf(
          Locale.ROOT,
          "records read            %d, parsed %d, failed %d%s%n",
          m.recordsRead(),
          m.parsed(),
          m.recordsRead() - m.parsed(),
          m.rejectsByReason().isEmpty() ? "" : " " + m.rejectsByReason());
      m.firstRejectByReason()
          .forEach((reason, msg) -> out.printf(Locale.ROOT, "  first %s: %s%n", reason, msg));
      if (m.encodedBytesPerRecord().isPresent()) {
        out.printf(
            Locale.ROOT,
            "parquet written         %d bytes in %d file(s)%n",
            m.encodedFileBytes(),
            m.encodedFiles());
      }
      if (m.topic() != null) {
        out.printf(
            Locale.ROOT,
            "topic rate              %.3f records/s by offsets (%d in the last %s s), %s by"
                + " sampled timestamps%n",
            m.topic().offsetsRate(),
            m.topic().recordsInWindow(),
            num(m.topic().windowSeconds()),
            Double.isFinite(m.topic().sampleTimestampsRate())
                ? String.format(Locale.ROOT, "%.3f", m.topic().sampleTimestampsRate())
                : "n/a");
      }
    }
    out.printf(
        Locale.ROOT, "rate                    %s records/s (%s)%n", num(in.rate), in.rateSource);
    out.printf(
        Locale.ROOT,
        "rate per writer/part.   %.3f records/s (%s records/s over %d writer(s) x %d partition(s))%n",
        plan.recordsPerSecondPerWriterPartition(),
        num(in.rate),
        writersUsed,
        partitionsPerCommit);
    out.printf(Locale.ROOT, "rows by memory          %d%n", plan.rowsByMemory());
    out.printf(Locale.ROOT, "rows by file size       %d%n", plan.rowsByFile());
    out.printf(Locale.ROOT, "rows by latency         %d%n", plan.rowsByTime());
    out.printf(
        Locale.ROOT,
        "rows per batch          %d  <- %s binds%n",
        plan.rowsPerBatch(),
        plan.bindingConstraint().jsonName());
    out.printf(Locale.ROOT, "commit interval         %s s%n", num(plan.commitIntervalSeconds()));
    out.printf(Locale.ROOT, "expected file size      %.3f MB%n", plan.expectedFileMb());
    out.printf(Locale.ROOT, "files per day           %d%n", Math.round(plan.filesPerDay()));
    out.println();
    out.println(plan.advice());
    out.println();
    out.println("job config:");
    jobConfig(plan).forEach((k, v) -> out.println("  " + k + ": " + v));
    out.println("flink-conf.yaml:");
    flinkConfig(plan).forEach((k, v) -> out.println("  " + k + ": " + v));
  }

  private void writeDerivation(BatchPlan plan, Inputs in, int writersUsed, ObjectNode result)
      throws IOException {
    Files.createDirectories(derivationDir);
    StringBuilder yaml = new StringBuilder("# written by spatial-ingest plan\n");
    jobConfig(plan).forEach((k, v) -> yaml.append(k).append(": ").append(v).append('\n'));
    Files.writeString(derivationDir.resolve("sizing.yaml"), yaml);
    StringBuilder flink = new StringBuilder("# written by spatial-ingest plan\n");
    flinkConfig(plan).forEach((k, v) -> flink.append(k).append(": ").append(v).append('\n'));
    Files.writeString(derivationDir.resolve("flink-conf-sizing.yaml"), flink);

    ObjectMapper mapper = mapper();
    ObjectNode d = mapper.createObjectNode();
    d.put("date", Instant.now(clock).toString());
    if (in.sampleSize != null) {
      d.put("sampleSize", in.sampleSize);
    } else {
      d.putNull("sampleSize");
    }
    d.put("source", in.source);
    d.put("bytesPerRecord", in.buffered);
    d.put("encodedBytesPerRecord", in.encoded);
    d.put("encodedBytesSource", in.encodedSource);
    if (in.measured != null) {
      d.put("recordsRead", in.measured.recordsRead());
      d.put("parseFailures", in.measured.recordsRead() - in.measured.parsed());
    }
    ObjectNode inputs = d.putObject("inputs");
    inputs.put("rate", in.rate);
    inputs.put("rateSource", in.rateSource);
    inputs.put("memoryBytes", plan.bounds().memoryBytes());
    inputs.put("targetFileBytes", plan.bounds().targetFileBytes());
    putNumber(inputs, "maxLatencySeconds", plan.bounds().maxLatency().toMillis() / 1000.0);
    putNumber(
        inputs,
        "checkpointIntervalSeconds",
        plan.bounds().checkpointInterval().toMillis() / 1000.0);
    inputs.put("writers", writersUsed);
    inputs.put("partitionsPerCommit", partitionsPerCommit);
    ObjectNode outputs = d.putObject("outputs");
    for (String f :
        new String[] {
          "rowsByMemory",
          "rowsByFile",
          "rowsByTime",
          "rowsPerBatch",
          "commitIntervalSeconds",
          "expectedFileMb",
          "bindingConstraint",
          "filesPerDay",
          "advice",
          "config"
        }) {
      outputs.set(f, result.get(f));
    }
    mapper.writeValue(derivationDir.resolve("derivation.json").toFile(), d);
  }

  private static void putNumber(ObjectNode o, String field, double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      o.put(field, (long) v);
    } else {
      o.put(field, v);
    }
  }

  private static double round3(double v) {
    return Math.round(v * 1000.0) / 1000.0;
  }

  private static String num(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? Long.toString((long) v)
        : String.format(Locale.ROOT, "%.3f", v);
  }

  private static ObjectMapper mapper() {
    return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  }

  private void requireAtLeast(String flag, int value, int min) {
    if (value < min) {
      throw usage(flag + " must be >= " + min + ", was " + value);
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
