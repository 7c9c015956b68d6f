package org.spatialingest.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.spatialingest.JobStart;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.ResumeFilter;
import org.spatialingest.tools.RunSummary;
import org.spatialingest.tools.TableAccess;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Submits the job to whatever environment launched it: {@code flink run}, the Kubernetes Operator,
 * or, started by {@code java -jar}, a local Flink cluster with checkpoints in a local directory and
 * {@code --flink} options ({@link RunEnvironment}).
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description =
        "Run the ingest job: Kafka -> geometry transform -> bounded Iceberg sink. Started by java -jar, it "
            + "runs on a local Flink cluster and prints where its checkpoints and its log file are.")
final class RunCommand implements Callable<Integer> {
  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "Job configuration YAML (see README: Configuration).")
  Path config;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "Override one configuration key; repeatable.")
  List<String> overrides = new ArrayList<>();

  @Option(
      names = "--bounded",
      description = "Stop at the offsets that are latest when the job starts (backfill).")
  boolean bounded;

  @Option(names = "--print-config", description = "Print the effective configuration and exit.")
  boolean printConfig;

  @Mixin FlinkOptionsMixin flink;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flinkOptions = flink.options();
    JobConfig jobConfig = ConfigLoader.load(config, overrides);
    PrintWriter out = spec.commandLine().getOut();
    if (printConfig) {
      jobConfig.redactedMap().forEach((k, v) -> out.println(k + ": " + v));
      out.flush();
      return Main.EXIT_OK;
    }
    StreamExecutionEnvironment env = RunEnvironment.create(flinkOptions, overrides, System.out);
    JobStart decided = SpatialIngestJob.build(env, jobConfig, bounded);
    Instant start = Instant.now();
    JobExecutionResult result =
        env.execute("spatial-ingest " + jobConfig.namespace() + "." + jobConfig.table());
    if ((bounded || jobConfig.input().fileSource()) && result.isJobExecutionResult()) {
      Long skipped = result.getAccumulatorResult(ResumeFilter.SKIPPED_ACCUMULATOR);
      try (TableAccess tables = TableAccess.open(jobConfig)) {
        out.println(
            RunSummary.of(
                    tables.table(),
                    tables.rejects(),
                    result.getJobID().toHexString(),
                    start,
                    skipped == null ? 0 : skipped,
                    decided.committedWhole().size())
                .line());
        out.flush();
      }
    }
    RunEnvironment.ended(env);
    return Main.EXIT_OK;
  }
}
