package org.spatialingest.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.config.JobConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Submits the job to whatever environment launched it: {@code flink run}, the Kubernetes Operator, or local. */
@Command(name = "run", mixinStandardHelpOptions = true,
    description = "Run the ingest job: Kafka -> geometry transform -> bounded Iceberg sink.")
final class RunCommand implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "Job configuration YAML (see README: Configuration).")
  Path config;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Override one configuration key; repeatable.")
  List<String> overrides = new ArrayList<>();

  @Option(names = "--bounded", description = "Stop at the offsets that are latest when the job starts (backfill).")
  boolean bounded;

  @Option(names = "--print-config", description = "Print the effective configuration and exit.")
  boolean printConfig;

  @Override
  public Integer call() throws Exception {
    JobConfig jobConfig = ConfigLoader.load(config, overrides);
    if (printConfig) {
      jobConfig.toMap().forEach((k, v) -> System.out.println(k + ": " + v));
      return Main.EXIT_OK;
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    SpatialIngestJob.build(env, jobConfig, bounded);
    env.execute("spatial-ingest " + jobConfig.namespace() + "." + jobConfig.table());
    return Main.EXIT_OK;
  }
}
