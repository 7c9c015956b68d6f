package org.spatialingest.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.local.LocalStack;
import org.spatialingest.sizing.Units;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The embedded default: a real broker, a generator, the job with the Flink web UI, a local warehouse. */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Start a local KRaft broker, a telemetry generator and the job on a local Flink cluster with the web "
        + "UI; commit to a local Iceberg warehouse. Ctrl-C stops cleanly.")
final class DemoCommand implements Callable<Integer> {
  @Option(names = "--duration", defaultValue = "0", description = "Stop after this long (e.g. 90s, 5m); 0 = until "
      + "Ctrl-C. Default: ${DEFAULT-VALUE}.")
  String duration;

  @Option(names = "--rate", defaultValue = "500", description = "Generated records per second. Default: "
      + "${DEFAULT-VALUE}.")
  int rate;

  @Option(names = "--vehicles", defaultValue = "20", description = "Moving point sources. Default: ${DEFAULT-VALUE}.")
  int vehicles;

  @Option(names = "--polygon-every", defaultValue = "2000", description = "One record in N is a polygon boundary "
      + "refresh. Default: ${DEFAULT-VALUE}.")
  int polygonEvery;

  @Option(names = "--polygon-vertices", defaultValue = "5000", description = "Vertices per polygon refresh. Default: "
      + "${DEFAULT-VALUE}.")
  int polygonVertices;

  @Option(names = "--warehouse", defaultValue = "./warehouse", description = "Local Iceberg warehouse. Default: "
      + "${DEFAULT-VALUE}.")
  Path warehouse;

  @Option(names = "--ui-port", defaultValue = "8081", description = "Flink web UI port. Default: ${DEFAULT-VALUE}.")
  int uiPort;

  @Option(names = "--parallelism", defaultValue = "2", description = "Default operator parallelism. Default: "
      + "${DEFAULT-VALUE}.")
  int parallelism;

  @Option(names = "--config", paramLabel = "FILE", description = "Job configuration YAML; kafka.* is set by the demo.")
  Path config;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Override one configuration key; repeatable.")
  List<String> overrides = new ArrayList<>();

  @Override
  public Integer call() throws Exception {
    Duration runFor = Units.parseDuration(duration);
    LocalStack.Options options = new LocalStack.Options(runFor, rate, vehicles, polygonEvery, polygonVertices,
        warehouse, uiPort, parallelism,
        config == null ? new java.util.LinkedHashMap<>() : ConfigLoader.readYaml(config),
        ConfigLoader.parseOverrides(overrides));
    return LocalStack.run(options, System.out);
  }
}
