package org.spatialingest.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.local.LocalStack;
import org.spatialingest.sizing.Units;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The embedded default: a real broker, a generator, the job with the Flink web UI, a local
 * warehouse.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Start a local KRaft broker, a telemetry generator and the job on a local Flink cluster with the web "
            + "UI; commit to a local Iceberg warehouse. Restarts and failed checkpoints are printed as they happen. On stop "
            + "(--duration or Ctrl-C) it waits until the job has read every produced record (at most --catch-up), "
            + "drains the job, and its last line compares the rows committed (table + rejects table) with the records "
            + "produced. Exit 0 only if they match, nothing is left in Kafka, the job never restarted and no checkpoint "
            + "failed; otherwise 1.")
final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--duration",
      defaultValue = "0",
      description =
          "Stop after this long (e.g. 90s, 5m); 0 = until " + "Ctrl-C. Default: ${DEFAULT-VALUE}.")
  String duration;

  @Option(
      names = "--rate",
      defaultValue = "500",
      description = "Generated records per second. Default: " + "${DEFAULT-VALUE}.")
  int rate;

  @Option(
      names = "--vehicles",
      defaultValue = "20",
      description = "Moving point sources. Default: ${DEFAULT-VALUE}.")
  int vehicles;

  @Option(
      names = "--polygon-every",
      defaultValue = "2000",
      description =
          "One record in N is a polygon boundary " + "refresh. Default: ${DEFAULT-VALUE}.")
  int polygonEvery;

  @Option(
      names = "--polygon-vertices",
      defaultValue = "5000",
      description = "Vertices per polygon refresh. Default: " + "${DEFAULT-VALUE}.")
  int polygonVertices;

  @Option(
      names = "--warehouse",
      defaultValue = "./warehouse",
      description = "Local Iceberg warehouse. Default: " + "${DEFAULT-VALUE}.")
  Path warehouse;

  @Option(
      names = "--ui-port",
      defaultValue = "8081",
      description = "Flink web UI port. Default: ${DEFAULT-VALUE}.")
  int uiPort;

  @Option(
      names = "--prometheus-port",
      defaultValue = "0",
      description =
          "Serve every Flink metric for Prometheus on http://localhost:PORT/metrics (Flink's Prometheus"
              + " reporter, as on Kubernetes); 0 = off. Default: ${DEFAULT-VALUE}.")
  int prometheusPort;

  @Option(
      names = "--parallelism",
      defaultValue = "2",
      description = "Default operator parallelism. Default: " + "${DEFAULT-VALUE}.")
  int parallelism;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "Job configuration YAML; kafka.* is set by the demo.")
  Path config;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description = "Override one configuration key; repeatable.")
  List<String> overrides = new ArrayList<>();

  @Option(
      names = "--catch-up",
      defaultValue = "auto",
      description =
          "On stop, wait at most this long until every "
              + "produced record is committed (the consumer group's offsets are the table's positions) before draining. "
              + "Default: ${DEFAULT-VALUE} = sink.max-latency + 2 x checkpoint.interval + 60 s.")
  String catchUp;

  @Mixin FlinkOptionsMixin flink;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flinkOptions = flink.options();
    LocalStack.Options options =
        new LocalStack.Options(
            Units.parseDuration(duration),
            rate,
            vehicles,
            polygonEvery,
            polygonVertices,
            warehouse,
            uiPort,
            prometheusPort,
            parallelism,
            config == null ? new LinkedHashMap<>() : ConfigLoader.readYaml(config),
            ConfigLoader.parseOverrides(overrides),
            flinkOptions,
            "auto".equals(catchUp) ? null : Units.parseDuration(catchUp),
            LocalLogFile.current().orElse(null));
    return LocalStack.run(options, System.out);
  }
}
