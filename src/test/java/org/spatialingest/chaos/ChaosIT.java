package org.spatialingest.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos run (see src/site/markdown/chaos.md). In {@code mvn verify}: the short variant (33,600
 * records, one fault of each part); {@code mvn -Pchaos verify}: at least 1,000,000 records and
 * every fault kind twice. Writes {@code target/chaos/results.md} and {@code .json} and fails unless
 * nothing was lost, duplicated or left behind.
 */
class ChaosIT {
  static final Path BUILD =
      Path.of(System.getProperty("spatialingest.build.dir", "target")).toAbsolutePath();

  @Test
  void nothingLostNothingDuplicatedThroughFaultsOfEveryKind(@TempDir Path work) throws Exception {
    ChaosSettings settings = ChaosSettings.fromSystemProperties();
    ChaosReport report;
    try {
      report = new ChaosRun(settings, work, BUILD).run();
    } catch (Throwable e) {
      keepLogs(work);
      throw e;
    }
    report.write(BUILD.resolve("chaos"));
    if (!report.check().ok()) {
      keepLogs(work); // the temporary directory goes with the test: the logs tell what happened
    }
    System.out.println(report.markdown());

    ChaosCheck.Result check = report.check();
    assertThat(report.faults()).as("faults injected").hasSize(settings.faults().size());
    assertThat(report.faults())
        .as("faults the job never reached")
        .noneMatch(f -> f.note().startsWith("NOT REACHED"));
    Set<FaultKind> kinds = EnumSet.noneOf(FaultKind.class);
    report.faults().forEach(f -> kinds.add(f.kind()));
    assertThat(kinds)
        .as("kinds injected")
        .containsExactlyInAnyOrderElementsOf(EnumSet.copyOf(settings.faults()));
    assertThat(check.produced()).as("records produced").isGreaterThanOrEqualTo(settings.rows());
    assertThat(check.lost()).as("rows lost").isZero();
    assertThat(check.duplicated()).as("rows duplicated").isZero();
    assertThat(check.rows())
        .as("rows in the table")
        .isEqualTo(check.expectedRows() + check.externalRows());
    assertThat(check.expectedRejects()).as("malformed records produced").isPositive();
    assertThat(check.rejects()).as("rejects = malformed").isEqualTo(check.expectedRejects());
    assertThat(check.rejectsLost() + check.rejectsDuplicated())
        .as("rejects lost or duplicated")
        .isZero();
    assertThat(check.orphans()).as("orphan files").isEmpty();
    assertThat(check.newColumnProblems()).as("the column of a property that appeared").isEmpty();
    assertThat(check.incoherentSnapshots()).as("incoherent snapshot summaries").isEmpty();
    assertThat(check.freshnessExamples()).as("commits older than L + C + recovery").isEmpty();
  }

  /** Copies the cluster's logs to {@code target/chaos/logs}. */
  private static void keepLogs(Path work) throws java.io.IOException {
    Path logs = work.resolve("flink").resolve("log");
    if (!java.nio.file.Files.isDirectory(logs)) {
      return;
    }
    Path kept = java.nio.file.Files.createDirectories(BUILD.resolve("chaos").resolve("logs"));
    try (var files = java.nio.file.Files.list(logs)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        java.nio.file.Files.copy(
            f, kept.resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    System.out.println("chaos: cluster logs kept in " + kept);
  }
}
