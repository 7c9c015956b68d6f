package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.tools.SinkWrittenTables;

/**
 * {@code inspect --html} on a real table written through the sink's file writer: one self-contained
 * page whose charts hold the table's numbers (the histogram counts every current file, T and L + C
 * come from the configuration, one point per sink commit, the close reasons of the summaries).
 */
class InspectHtmlTest {
  private static final Pattern SVG = Pattern.compile("<svg.*?</svg>", Pattern.DOTALL);

  @Test
  void writesOneSelfContainedPageOfTheTable(@TempDir Path dir) throws Exception {
    JobConfig config = SinkWrittenTables.config(dir.resolve("warehouse"), "ns", "events", "day");
    Table table = SinkWrittenTables.create(config, Map.of());
    TelemetryGenerator gen = new TelemetryGenerator(3, 20, 0, 0);
    long day = 1_795_000_000_000L;
    CloseReason[] reasons = {
      CloseReason.LATENCY,
      CloseReason.BYTES,
      CloseReason.LATENCY,
      CloseReason.MEMORY,
      CloseReason.LATENCY
    };
    for (int i = 0; i < reasons.length; i++) {
      // commits 1 and 3 span two days: two files in one commit
      SinkWrittenTables.commit(
          table,
          SinkWrittenTables.rows(
              gen, 200 * (i + 1), day + i * 3_600_000L, i % 2 == 1 ? 500_000 : 10),
          reasons[i],
          i + 1);
    }
    table.refresh();
    int files = 0;
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask ignored : tasks) {
        files++;
      }
    }
    Map<String, Long> closed = new TreeMap<>();
    table
        .snapshots()
        .forEach(
            s ->
                s.summary()
                    .forEach(
                        (k, v) -> {
                          if (k.startsWith("spatial-ingest.closed.")) {
                            closed.merge(
                                k.substring("spatial-ingest.closed.".length()),
                                Long.parseLong(v),
                                Long::sum);
                          }
                        }));

    Path page = dir.resolve("inspect.html");
    List<String> args =
        new ArrayList<>(List.of("inspect", "--html", page.toString(), "--limit", "2"));
    args.addAll(SinkWrittenTables.catalogArgs(config));
    args.addAll(
        List.of(
            "--set",
            "sink.target-file-size=500KB",
            "--set",
            "sink.max-latency=20s",
            "--set",
            "checkpoint.interval=10s"));
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertThat(r.exitCode()).as(r.err()).isZero();

    String html = Files.readString(page);
    if (System.getProperty("inspect.html.keep") != null) {
      Files.writeString(Path.of(System.getProperty("inspect.html.keep")), html);
    }
    assertThat(html).startsWith("<!doctype html>").endsWith("</html>");
    assertThat(html).doesNotContain("<script", "src=", "href=", "@import", "url(");
    assertThat(html.replace("http://www.w3.org/2000/svg", "")).doesNotContain("http:", "https:");
    List<String> charts = all(SVG, html);
    assertThat(charts).hasSize(5);

    // 1: histogram of every current file, against T
    assertThat(sum(charts.get(0), "data-files")).isEqualTo(files);
    assertThat(charts.get(0)).contains("T = 0.50 MB");
    // 2, 3: one point per sink commit (all five, though --limit 2 limits the text listing)
    assertThat(count(charts.get(1), "class='point'")).isEqualTo(reasons.length);
    assertThat(count(charts.get(2), "class='point'")).isEqualTo(reasons.length);
    // 4: oldest and newest row's age per commit, against L + C
    assertThat(count(charts.get(3), "class='point'")).isEqualTo(2 * reasons.length);
    assertThat(charts.get(3)).contains("L + C = 30s");
    // 5: close reasons as the summaries count them
    Map<String, Long> shown = new TreeMap<>();
    Matcher m =
        Pattern.compile("data-reason='([a-z_]+)' data-files='(\\d+)'").matcher(charts.get(4));
    while (m.find()) {
      shown.put(m.group(1), Long.parseLong(m.group(2)));
    }
    assertThat(shown)
        .containsKeys("end_of_input", "partition_limit", "checkpoint"); // every reason, also at 0
    shown.values().removeIf(n -> n == 0);
    assertThat(shown).isEqualTo(closed).containsKeys("latency", "bytes", "memory");
  }

  private static List<String> all(Pattern p, String s) {
    List<String> out = new ArrayList<>();
    Matcher m = p.matcher(s);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  private static int count(String s, String needle) {
    int n = 0;
    for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
      n++;
    }
    return n;
  }

  private static long sum(String svg, String attribute) {
    long n = 0;
    Matcher m = Pattern.compile(attribute + "='(\\d+)'").matcher(svg);
    while (m.find()) {
      n += Long.parseLong(m.group(1));
    }
    return n;
  }
}
