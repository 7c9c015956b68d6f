package org.spatialingest.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.it.ChildJvm;

/**
 * Short demo runs on the real embedded stack: a healthy run's last line says every produced record
 * is committed, with counts that add up, and exits 0; a run whose checkpoints cannot hold the
 * sink's state (JobManager storage, forced with a Flink option) prints the failures as they happen,
 * ends with a FAILED line naming the restarts, and exits 1.
 */
class DemoTruthTest {
  private static final Pattern OK_LINE =
      Pattern.compile(
          "RESULT OK: every produced record is committed: ([\\d,]+) "
              + "produced = ([\\d,]+) rows in spatial\\.telemetry \\+ ([\\d,]+) in spatial\\.telemetry_rejects; 0 restarts, "
              + "0 failed checkpoints \\(\\d+ completed.*\\)\\.");

  /**
   * Two demos into one warehouse, as a newcomer runs them: the second, on a new broker, commits
   * every record it produced too (under one topic name it skipped as many as the first committed,
   * read as the positions of its partitions).
   */
  @Test
  void healthyRunsCommitEveryProducedRecordAndSaySo(@TempDir Path warehouse) throws Exception {
    for (int seconds : new int[] {6, 4}) {
      ByteArrayOutputStream printed = new ByteArrayOutputStream();
      String checkpoints = warehouse.resolve("checkpoints-" + seconds).toUri().toString();
      int exit =
          LocalStack.run(
              options(
                  warehouse,
                  Duration.ofSeconds(seconds),
                  200,
                  50,
                  50,
                  Map.of(),
                  Map.of("execution.checkpointing.dir", checkpoints),
                  60),
              new PrintStream(printed, true, StandardCharsets.UTF_8));

      List<String> lines = printed.toString(StandardCharsets.UTF_8).lines().toList();
      String last = lines.get(lines.size() - 1);
      assertThat(exit).as(String.join("\n", lines)).isEqualTo(LocalStack.OK);
      Matcher m = OK_LINE.matcher(last);
      assertThat(m.matches()).as(last).isTrue();
      long produced = count(m.group(1));
      assertThat(produced).isGreaterThan(500);
      assertThat(count(m.group(2)) + count(m.group(3))).isEqualTo(produced);
      assertThat(lines)
          .contains(
              "Checkpoints:   "
                  + checkpoints
                  + " (filesystem storage; savepoints in "
                  + checkpoints
                  + "/savepoints)");
      assertThat(lines).noneMatch(l -> l.contains("!!"));
    }
  }

  @Test
  void runThatRestartsPrintsItAndEndsFailed(@TempDir Path warehouse) throws Exception {
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    // checkpoints that cannot finish in 10 ms expire, and with no tolerated checkpoint failure the
    // job fails over
    int exit =
        LocalStack.run(
            options(
                warehouse,
                Duration.ofSeconds(8),
                200,
                50,
                2_000,
                Map.of(),
                Map.of(
                    "execution.checkpointing.timeout",
                    "10ms",
                    "execution.checkpointing.dir",
                    warehouse.resolve("checkpoints").toUri().toString()),
                5),
            new PrintStream(printed, true, StandardCharsets.UTF_8));

    List<String> lines = printed.toString(StandardCharsets.UTF_8).lines().toList();
    String last = lines.get(lines.size() - 1);
    assertThat(exit).as(String.join("\n", lines)).isEqualTo(LocalStack.RESULT_FAILED);
    assertThat(lines).as(String.join("\n", lines)).anyMatch(l -> l.startsWith("!! checkpoint "));
    assertThat(lines)
        .anyMatch(l -> l.matches("!! the job restarted \\(\\d+ restarts? so far\\): .+"));
    assertThat(last)
        .startsWith("RESULT FAILED: ")
        .containsPattern("; [1-9]\\d* restarts?, [1-9]\\d* failed checkpoints?");
    Matcher claim =
        Pattern.compile(
                "every produced record is committed: ([\\d,]+) produced = ([\\d,]+) rows in \\S+ "
                    + "\\+ ([\\d,]+) in ")
            .matcher(last);
    if (claim.find()) { // only when the counts say so
      assertThat(count(claim.group(2)) + count(claim.group(3))).isEqualTo(count(claim.group(1)));
    }
  }

  private static LocalStack.Options options(
      Path warehouse,
      Duration duration,
      int rate,
      int polygonEvery,
      int polygonVertices,
      Map<String, String> jobKeys,
      Map<String, String> flinkOptions,
      int catchUpSeconds) {
    Map<String, String> keys =
        new java.util.HashMap<>(Map.of("checkpoint.interval", "1s", "sink.max-latency", "3s"));
    keys.putAll(jobKeys);
    return new LocalStack.Options(
        duration,
        rate,
        5,
        polygonEvery,
        polygonVertices,
        warehouse.resolve("warehouse"),
        ChildJvm.freePort(),
        0,
        2,
        Map.of(),
        keys,
        flinkOptions,
        Duration.ofSeconds(catchUpSeconds),
        null);
  }

  private static long count(String digits) {
    return Long.parseLong(digits.replace(",", ""));
  }
}
