package org.spatialingest.sink.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HeartbeatManagerOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.junit.jupiter.api.Test;

/** The two clean-up passes of a (re)start: the first at once, the second only past the bound. */
class CleanupPassesTest {
  @Test
  void theFirstPassRunsAtOnceTheSecondOnlyPastTheBoundThenNoMore() {
    CleanupPasses passes = new CleanupPasses(1_000);
    assertThat(passes.due(0)).as("first pass at the first completed checkpoint").isTrue();
    assertThat(passes.due(0)).as("until it ran to its end").isTrue();
    passes.passed();
    assertThat(passes.due(999)).as("an earlier attempt's task may still write").isFalse();
    assertThat(passes.due(1_000)).isTrue();
    passes.passed();
    assertThat(passes.due(Long.MAX_VALUE)).as("no third pass").isFalse();
  }

  @Test
  void theBoundIsTheHeartbeatTimeoutPlusTheCancellationTimeout() {
    Configuration flink = new Configuration();
    flink.set(HeartbeatManagerOptions.HEARTBEAT_TIMEOUT, Duration.ofSeconds(8));
    flink.set(TaskManagerOptions.TASK_CANCELLATION_TIMEOUT, Duration.ofSeconds(20));
    long before = System.currentTimeMillis();
    CleanupPasses passes = CleanupPasses.startingNow(flink);
    passes.passed();
    assertThat(passes.due(before + 27_000)).isFalse();
    assertThat(passes.due(System.currentTimeMillis() + 28_000)).isTrue();

    flink.set(TaskManagerOptions.TASK_CANCELLATION_TIMEOUT, Duration.ZERO); // "never kill"
    passes = CleanupPasses.startingNow(flink);
    passes.passed();
    assertThat(passes.due(before + 8_000 + 179_000))
        .as(
            "0 counts as the default, %s",
            TaskManagerOptions.TASK_CANCELLATION_TIMEOUT.defaultValue())
        .isFalse();
  }
}
