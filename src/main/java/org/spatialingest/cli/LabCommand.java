package org.spatialingest.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.spatialingest.local.LagLab;
import org.spatialingest.local.LagLabReport;
import org.spatialingest.sizing.Units;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The lag lab: baseline, overload (artificial delay), delay removed with an admission cap. */
@Command(
    name = "lab",
    mixinStandardHelpOptions = true,
    description =
        "Run the lag lab on the embedded stack: three scenarios, results.json and lab.html in --out, and a "
            + "summary table. Restarts and failed checkpoints are printed as they happen. Exit 1 if any produced id was "
            + "not committed exactly once, the job restarted or a checkpoint failed.")
final class LabCommand implements Callable<Integer> {
  @Option(
      names = "--out",
      defaultValue = "lab-results",
      description = "Output folder. Default: ${DEFAULT-VALUE}.")
  Path out;

  @Option(
      names = "--input",
      defaultValue = "20s",
      description = "How long each scenario offers input. Default: " + "${DEFAULT-VALUE}.")
  String input;

  @Option(
      names = "--base-rate",
      defaultValue = "100",
      description = "Offered records/s of the baseline. Default: " + "${DEFAULT-VALUE}.")
  double baseRate;

  @Option(
      names = "--high-rate",
      defaultValue = "1000",
      description =
          "Offered records/s of overload and " + "delay-removed. Default: ${DEFAULT-VALUE}.")
  double highRate;

  @Option(
      names = "--delay-us",
      defaultValue = "2000",
      description =
          "ARTIFICIAL per-record processing delay of the "
              + "overload scenario, microseconds. Default: ${DEFAULT-VALUE}.")
  long delayMicros;

  @Option(
      names = "--cap",
      defaultValue = "700",
      description = "Admission cap (records/s) of delay-removed. Default: " + "${DEFAULT-VALUE}.")
  double cap;

  @Mixin FlinkOptionsMixin flink;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flinkOptions = flink.options();
    List<LagLab.Scenario> scenarios = LagLab.defaultScenarios(baseRate, highRate, delayMicros, cap);
    double seconds = Units.parseDuration(input).toMillis() / 1e3;
    LocalLogFile.current().ifPresent(log -> System.out.println("logs: " + log));
    List<LagLab.ScenarioResult> results =
        LagLab.run(scenarios, seconds, out, flinkOptions, System.out);
    LagLabReport.write(results, out);
    LagLabReport.printTable(results, System.out);
    System.out.println(
        "results: " + out.resolve("results.json") + "  chart: " + out.resolve("lab.html"));
    return results.stream().allMatch(LagLab.ScenarioResult::passed)
        ? Main.EXIT_OK
        : Main.EXIT_CHECK_FAILED;
  }
}
