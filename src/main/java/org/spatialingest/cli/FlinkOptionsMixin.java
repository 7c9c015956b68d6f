package org.spatialingest.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --flink KEY=VALUE}, shared by the commands that start a local Flink cluster (run, demo,
 * lab): any Flink option, applied to the local environment's configuration after the local
 * defaults, so it wins over them. Keys must be options Flink declares and values must parse as the
 * option's type ({@link FlinkOptionCatalog#validate}); otherwise the command stops with a usage
 * error naming the option.
 */
final class FlinkOptionsMixin {
  @Option(
      names = "--flink",
      paramLabel = "KEY=VALUE",
      description = {
        "Set any Flink configuration option of the local cluster; repeatable. Applied after the local defaults, so it "
            + "wins over them. Examples:",
        "  --flink taskmanager.numberOfTaskSlots=4",
        "  --flink execution.checkpointing.dir=/data/cp",
        "  --flink restart-strategy.type=none",
        "Checkpoints go to a new directory under java.io.tmpdir by default (printed at start). Job keys such as "
            + "checkpoint.interval are --set keys and win over --flink."
      })
  List<String> flink = new ArrayList<>();

  /** The options in command-line order, validated. */
  Map<String, String> options() {
    return validate(flink);
  }

  /**
   * Splits and checks {@code KEY=VALUE} arguments ({@link FlinkOptionCatalog#validate}); without
   * any, no Flink class is loaded (commands such as {@code plan} stay light).
   */
  static Map<String, String> validate(List<String> arguments) {
    return arguments.isEmpty()
        ? new LinkedHashMap<>()
        : FlinkOptionCatalog.get().validate(arguments);
  }
}
