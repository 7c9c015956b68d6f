package org.spatialingest.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.spatialingest.config.ConfigException;
import picocli.CommandLine.Option;

/**
 * {@code --flink KEY=VALUE}, shared by the commands that start a local Flink cluster (run, demo, lab): any Flink
 * option, applied to the local environment's configuration after the local defaults, so it wins over them. Keys must
 * be options Flink declares ({@link FlinkOptionCatalog}) and values must parse as the option's type; otherwise the
 * command stops with a usage error naming the option.
 */
final class FlinkOptionsMixin {
  @Option(names = "--flink", paramLabel = "KEY=VALUE", description = {
      "Set any Flink configuration option of the local cluster; repeatable. Applied after the local defaults, so it "
          + "wins over them. Examples:",
      "  --flink taskmanager.numberOfTaskSlots=4",
      "  --flink execution.checkpointing.dir=/data/cp",
      "  --flink restart-strategy.type=none",
      "Checkpoints go to a new directory under java.io.tmpdir by default (printed at start). Job keys such as "
          + "checkpoint.interval are --set keys and win over --flink."})
  List<String> flink = new ArrayList<>();

  /** The options in command-line order, validated. */
  Map<String, String> options() {
    return validate(flink);
  }

  /** Splits and checks {@code KEY=VALUE} arguments; throws {@link ConfigException} naming the first bad one. */
  static Map<String, String> validate(List<String> arguments) {
    Map<String, String> options = new LinkedHashMap<>();
    for (String argument : arguments) {
      int eq = argument.indexOf('=');
      if (eq <= 0) {
        throw new ConfigException("--flink '" + argument + "' must look like KEY=VALUE, e.g. --flink "
            + "taskmanager.numberOfTaskSlots=4");
      }
      String key = argument.substring(0, eq).trim();
      String value = argument.substring(eq + 1).trim();
      FlinkOptionCatalog catalog = FlinkOptionCatalog.get();
      if (catalog.size() > 0 && !catalog.isKnown(key)) {
        throw new ConfigException("--flink " + key + ": Flink has no option '" + key + "'"
            + catalog.closest(key).map(k -> "; did you mean " + k + "?").orElse(""));
      }
      catalog.option(key).ifPresent(option -> checkValue(option, key, value));
      options.put(key, value);
    }
    return options;
  }

  private static void checkValue(ConfigOption<?> option, String key, String value) {
    Configuration probe = new Configuration();
    probe.setString(key, value);
    try {
      probe.get(option);
    } catch (IllegalArgumentException e) {
      StringBuilder why = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t.getMessage() != null && why.indexOf(t.getMessage()) < 0) {
          why.append(why.length() == 0 ? "" : ": ").append(t.getMessage());
        }
      }
      throw new ConfigException("--flink " + key + "=" + value + ": invalid value for Flink option '" + key + "' ("
          + why + ")", e);
    }
  }
}
