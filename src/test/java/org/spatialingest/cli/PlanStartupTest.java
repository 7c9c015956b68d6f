package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * plan --bytes-per-record stays pure math: no Flink, Iceberg, Kafka or Hadoop class and none of the
 * sample measuring code is loaded. (picocli's reflection over the other subcommands loads a few
 * small records of the tools package, which is harmless: they pull in nothing else.)
 */
class PlanStartupTest {
  @Test
  void bytesPerRecordLoadsNoHeavyLibrary() throws Exception {
    String java =
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    Process p =
        new ProcessBuilder(
                List.of(
                    java,
                    "-Xshare:off",
                    "-verbose:class",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Main.class.getName(),
                    "plan",
                    "--bytes-per-record",
                    "500",
                    "--rate",
                    "100",
                    "--json"))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("\"bindingConstraint\" : \"latency\"");
    assertThat(out).contains("org.spatialingest.cli.PlanCommand");
    List<String> heavy =
        out.lines()
            .filter(l -> l.contains("[class,load]"))
            .filter(
                l ->
                    l.contains(" org.apache.flink.")
                        || l.contains(" org.apache.iceberg.")
                        || l.contains(" org.apache.kafka.")
                        || l.contains(" org.apache.hadoop.")
                        || l.contains(" org.spatialingest.cli.PlanSampling")
                        || l.contains(" org.spatialingest.tools.RecordSample")
                        || l.contains(" org.spatialingest.tools.KafkaSampler")
                        // the sink's options are plain keys and defaults the configuration
                        // names; the rest of the sink loads Flink and Iceberg
                        || l.contains(" org.spatialingest.sink.")
                            && !l.contains(" org.spatialingest.sink.options."))
            .toList();
    assertThat(heavy).isEmpty();
  }
}
