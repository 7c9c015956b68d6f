package org.spatialingest.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short lab run: results are complete, every id is committed once, no scenario's job restarted or
 * failed a checkpoint (checkpoints in the folder given with a Flink option), and the lab shows what
 * it is meant to show.
 */
@Tag(
    "extended") // three scenarios, ~30 s; `lab` is a tool, the job's freshness is BoundedSinkTest's
class LagLabTest {
  @Test
  void shortLabRunIsCompleteAndExact(@TempDir Path out) throws Exception {
    List<LagLab.Scenario> scenarios = LagLab.defaultScenarios(50, 300, 6_000, 100);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    String checkpoints = out.resolve("checkpoints").toUri().toString();
    List<LagLab.ScenarioResult> results =
        LagLab.run(
            scenarios,
            3,
            out,
            Map.of("execution.checkpointing.dir", checkpoints),
            new PrintStream(log, true));
    assertThat(log.toString()).startsWith("checkpoints: " + checkpoints + " (filesystem storage; ");
    for (LagLab.ScenarioResult r : results) {
      assertThat(r.health().watched()).as(log.toString()).isTrue();
      assertThat(r.health().healthy()).as(log.toString()).isTrue();
      assertThat(r.health().completedCheckpoints()).isPositive();
      assertThat(r.passed()).isTrue();
    }
    assertThat(log.toString()).doesNotContain("!!");
    LagLabReport.write(results, out);

    JsonNode doc = new ObjectMapper().readTree(out.resolve("results.json").toFile());
    assertThat(doc.path("scenarios")).hasSize(3);
    for (JsonNode s : doc.path("scenarios")) {
      for (String field :
          List.of(
              "scenario",
              "offeredRate",
              "admittedRate",
              "ageAtCommitP50Ms",
              "ageAtCommitP95Ms",
              "ageAtCommitMaxMs",
              "backlogAtEndOfInput",
              "everyIdCommittedOnce",
              "restarts",
              "failedCheckpoints")) {
        assertThat(s.has(field)).as("%s has %s", s.path("scenario").asText(), field).isTrue();
      }
      assertThat(s.path("everyIdCommittedOnce").asBoolean()).as(log.toString()).isTrue();
    }
    assertThat(Files.readString(out.resolve("lab.html")))
        .contains("<svg", "baseline", "delay-removed");
    for (LagLab.ScenarioResult r : results) {
      assertThat(r.events()).hasSize((int) r.produced());
      assertThat(r.events())
          .allSatisfy(
              e -> {
                assertThat(e.processingStartMs()).isGreaterThanOrEqualTo(e.ingressMs() - 5);
                assertThat(e.committedMs()).isGreaterThanOrEqualTo(e.processingStartMs());
              });
    }
    LagLab.ScenarioResult baseline = results.get(0);
    LagLab.ScenarioResult overload = results.get(1);
    LagLab.ScenarioResult capped = results.get(2);
    // the artificial delay builds a queue in front of the job; the cap keeps one even without the
    // delay
    assertThat(LagLabReport.ageAtCommit(overload)[1])
        .isGreaterThan(LagLabReport.ageAtCommit(baseline)[1]);
    assertThat(overload.backlogAtEndOfInput()).isGreaterThan(0);
    assertThat(capped.backlogAtEndOfInput()).isGreaterThan(0);
    assertThat(capped.admittedRate()).isLessThan(capped.offeredRateActual() * 0.8);
  }
}
