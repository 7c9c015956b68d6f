package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EstimateTasksCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long MIB = 1L << 20;

  @TempDir Path dir;

  private Path sizes(String content) throws Exception {
    Path f = dir.resolve("sizes-" + System.nanoTime() + ".txt");
    Files.writeString(f, content);
    return f;
  }

  @Test
  void sparkTwoAndThreeFiftyMibFiles() throws Exception {
    String fifty = Long.toString(50 * MIB);
    CliRun two =
        CliRun.of(
            "estimate-tasks",
            "--engine",
            "spark",
            "--sizes",
            sizes(fifty + "\n" + fifty + "\n").toString(),
            "--json");
    assertThat(two.exitCode()).as(two.err()).isZero();
    JsonNode j = JSON.readTree(two.out());
    assertThat(j.get("estimatedTasks").asInt()).isEqualTo(1);
    assertThat(j.get("inputFiles").asInt()).isEqualTo(2);
    assertThat(j.get("totalBytes").asLong()).isEqualTo(100 * MIB);
    assertThat(j.get("totalMiB").asDouble()).isEqualTo(100.0);
    assertThat(j.get("maxPartitionBytes").asLong()).isEqualTo(128 * MIB);
    assertThat(j.get("maxSplitBytes").asLong()).isEqualTo(128 * MIB);
    assertThat(j.get("openCost").asLong()).isEqualTo(4 * MIB);
    assertThat(j.get("planningBytes").asLong()).isEqualTo(108 * MIB);
    assertThat(j.get("avgChunksPerTask").asDouble()).isEqualTo(2.0);
    assertThat(j.has("waves")).isFalse();
    assertThat(two.err()).contains("no --default-parallelism");

    CliRun three =
        CliRun.of(
            "estimate-tasks",
            "--engine",
            "spark",
            "--sizes",
            sizes(fifty + "\n" + fifty + "\n" + fifty).toString(),
            "--slots",
            "1",
            "--json");
    JsonNode k = JSON.readTree(three.out());
    assertThat(k.get("estimatedTasks").asInt()).isEqualTo(2);
    assertThat(k.get("minTaskBytes").asLong()).isEqualTo(50 * MIB);
    assertThat(k.get("maxTaskBytes").asLong()).isEqualTo(100 * MIB);
    assertThat(k.get("avgTaskBytes").asLong()).isEqualTo(75 * MIB);
    assertThat(k.get("minChunksPerTask").asInt()).isEqualTo(1);
    assertThat(k.get("maxChunksPerTask").asInt()).isEqualTo(2);
    assertThat(k.get("waves").asInt()).isEqualTo(2);
  }

  @Test
  void icebergFromAnObjectStoreListing() throws Exception {
    // weights 100, 60, 30, 4 (1 MiB file) at 128 MiB: [100, 1] and [60, 30] -> 2 tasks
    Path listing =
        sizes(
            String.join(
                "\n",
                "HTTP/1.1 200 OK",
                "Content-Length: " + 100 * MIB,
                "ETag: x",
                "Content-Length: " + 60 * MIB,
                "",
                "Content-Length: " + 30 * MIB,
                "Content-Length: " + MIB));
    CliRun r =
        CliRun.of("estimate-tasks", "--engine", "iceberg", "--sizes", listing.toString(), "--json");
    assertThat(r.exitCode()).as(r.err()).isZero();
    JsonNode j = JSON.readTree(r.out());
    assertThat(j.get("inputFiles").asInt()).isEqualTo(4);
    assertThat(j.get("estimatedTasks").asInt()).isEqualTo(2);
    assertThat(j.get("planningBytes").asLong()).isEqualTo(194 * MIB);
    assertThat(j.get("maxTaskBytes").asLong()).isEqualTo(101 * MIB);
  }

  @Test
  void humanOutputAndSizeUnits() throws Exception {
    CliRun r =
        CliRun.of(
            "estimate-tasks",
            "--engine",
            "spark",
            "--sizes",
            sizes("1000\n2000\n").toString(),
            "--max-partition-bytes",
            "64MiB",
            "--open-cost",
            "0",
            "--default-parallelism",
            "2",
            "--slots",
            "4");
    assertThat(r.exitCode()).as(r.err()).isZero();
    // total 3000 / 2 = 1500 = maxSplitBytes: 2000 | 1000 -> 2 tasks
    assertThat(r.out())
        .contains("max split bytes      1500")
        .contains("estimated tasks      2")
        .contains("waves                1 (4 slots)");
  }

  @Test
  void badInputExitsTwo() throws Exception {
    CliRun bad =
        CliRun.of(
            "estimate-tasks", "--engine", "spark", "--sizes", sizes("10\n\n1O0\n").toString());
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad.err()).contains("line 3").contains("1O0");

    CliRun empty =
        CliRun.of("estimate-tasks", "--engine", "spark", "--sizes", sizes("\n\n").toString());
    assertThat(empty.exitCode()).isEqualTo(2);
    assertThat(empty.err()).contains("no file sizes");

    CliRun engine =
        CliRun.of("estimate-tasks", "--engine", "hive", "--sizes", sizes("1").toString());
    assertThat(engine.exitCode()).isEqualTo(2);
    assertThat(engine.err()).contains("--engine");

    CliRun size =
        CliRun.of(
            "estimate-tasks",
            "--engine",
            "spark",
            "--sizes",
            sizes("1").toString(),
            "--max-partition-bytes",
            "lots");
    assertThat(size.exitCode()).isEqualTo(2);
    assertThat(size.err()).contains("--max-partition-bytes");

    CliRun missing =
        CliRun.of("estimate-tasks", "--engine", "spark", "--sizes", dir.resolve("none").toString());
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--sizes");
  }
}
