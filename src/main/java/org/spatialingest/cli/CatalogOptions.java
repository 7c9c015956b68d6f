package org.spatialingest.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.ConfigLoader;
import org.spatialingest.config.JobConfig;
import picocli.CommandLine.Option;

/**
 * The job configuration options of {@code plan --sample/--topic}, {@code verify}, {@code inspect}
 * and {@code estimate-tasks --table}: the job's own configuration ({@code --config FILE}, {@code
 * --set key=value}) loaded through {@link ConfigLoader}, so every key means exactly what it means
 * for {@code run}: {@code catalog.*} and {@code table.*} locate a table; {@code input.*}, {@code
 * transform.*}, {@code regions.*} and {@code table.partitioning} say how {@code plan} parses a
 * sample and which table it sizes it for. A {@code --table NS.TABLE} given to the command overrides
 * {@code table.namespace} and {@code table.name}.
 */
final class CatalogOptions {
  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "Job configuration YAML (the one `run` uses): catalog.* and table.* locate a table; plan parses"
              + " and sizes samples with input.*, transform.*, regions.* and table.partitioning.")
  Path config;

  @Option(
      names = "--set",
      paramLabel = "KEY=VALUE",
      description =
          "Override one configuration key, e.g. catalog.warehouse=s3://bucket/wh; repeatable.")
  List<String> overrides = new ArrayList<>();

  /** The job configuration, with {@code table} ({@code NS.TABLE}, may be null) applied last. */
  JobConfig jobConfig(String table) {
    List<String> all = new ArrayList<>(overrides);
    if (table != null) {
      int dot = table.lastIndexOf('.');
      if (dot <= 0 || dot == table.length() - 1) {
        throw new ConfigException("--table '" + table + "' must look like NAMESPACE.TABLE");
      }
      all.add("table.namespace=" + table.substring(0, dot));
      all.add("table.name=" + table.substring(dot + 1));
    }
    return ConfigLoader.load(config, all);
  }
}
