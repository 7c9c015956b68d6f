package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.spatialingest.config.ConfigException;

/**
 * {@code --flink KEY=VALUE} on run, demo and lab: documented in --help, validated against Flink's
 * own option declarations before anything starts, and a bad key or value stops the command with a
 * usage error naming it. (That commands without --flink load no Flink class is {@link
 * PlanStartupTest}'s to check.)
 */
class FlinkOptionsTest {
  @Test
  void everyLocalCommandDocumentsTheOption() {
    for (String command : List.of("run", "demo", "lab")) {
      CliRun help = CliRun.of(command, "--help");
      assertThat(help.exitCode()).isZero();
      assertThat(help.out())
          .as(command)
          .contains(
              "--flink=KEY=VALUE",
              "Set any Flink configuration option",
              "--flink execution.checkpointing.dir=/data/cp",
              "Checkpoints go to a new directory");
    }
  }

  @Test
  void knownOptionsPassWithTheirValuesInOrder() {
    Map<String, String> options =
        FlinkOptionsMixin.validate(
            List.of(
                "execution.checkpointing.dir=file:///data/cp",
                "taskmanager.numberOfTaskSlots = 4",
                "restart-strategy.type=none",
                "metrics.reporter.prom.factory.class=org.example.Factory",
                "pipeline.global-job-parameters=a:1,b:2"));
    assertThat(options)
        .containsExactly(
            Map.entry("execution.checkpointing.dir", "file:///data/cp"),
            Map.entry("taskmanager.numberOfTaskSlots", "4"),
            Map.entry("restart-strategy.type", "none"),
            Map.entry("metrics.reporter.prom.factory.class", "org.example.Factory"),
            Map.entry("pipeline.global-job-parameters", "a:1,b:2"));
  }

  @Test
  void unknownKeyIsRefusedWithAHint() {
    assertThatThrownBy(
            () -> FlinkOptionsMixin.validate(List.of("execution.checkpointing.dirr=/tmp/cp")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--flink execution.checkpointing.dirr: Flink has no option 'execution.checkpointing.dirr'; did "
                + "you mean execution.checkpointing.dir?");
  }

  @Test
  void badValueAndMissingEqualsAreUsageErrorsNamingTheOption() {
    CliRun badValue = CliRun.of("demo", "--flink", "taskmanager.numberOfTaskSlots=many");
    assertThat(badValue.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(badValue.err())
        .startsWith(
            "error: --flink taskmanager.numberOfTaskSlots=many: invalid value for "
                + "Flink option 'taskmanager.numberOfTaskSlots'");

    CliRun badEnum = CliRun.of("lab", "--flink", "execution.checkpointing.mode=SOMETIMES");
    assertThat(badEnum.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(badEnum.err())
        .contains("--flink execution.checkpointing.mode=SOMETIMES", "EXACTLY_ONCE");

    CliRun unknown = CliRun.of("run", "--flink", "no.such.option=1");
    assertThat(unknown.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(unknown.err())
        .startsWith("error: --flink no.such.option: Flink has no option 'no.such.option'");

    CliRun noEquals = CliRun.of("run", "--flink", "taskmanager.numberOfTaskSlots");
    assertThat(noEquals.exitCode()).isEqualTo(Main.EXIT_USAGE);
    assertThat(noEquals.err())
        .startsWith("error: --flink 'taskmanager.numberOfTaskSlots' must look like KEY=VALUE");
  }
}
