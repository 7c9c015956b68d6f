package org.spatialingest.tools;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.spatialingest.sizing.SizingBounds;
import org.spatialingest.tools.TableInspection.Report;
import org.spatialingest.tools.TableInspection.SnapshotRow;

/**
 * {@code inspect --html}: one self-contained page (inline SVG, no script, nothing loaded from
 * elsewhere) of a {@link Report} against the job's bounds: the current files' size histogram
 * against T, rows and files per sink commit over time, the age of the oldest and newest row at
 * commit over time against L + C, and the close reasons.
 */
public final class InspectionPage {
  private static final int W = 760;
  private static final int H = 300;
  private static final int PAD = 50;
  static final int SIZE_BINS = 30;

  private InspectionPage() {}

  public static String html(Report r, SizingBounds bounds) {
    List<SnapshotRow> commits = new ArrayList<>();
    for (SnapshotRow s : r.snapshotList()) {
      if (s.sink()) {
        commits.add(0, s); // oldest first
      }
    }
    long t = bounds.targetFileBytes();
    double lc = (bounds.maxLatency().toMillis() + bounds.checkpointInterval().toMillis()) / 1e3;
    StringBuilder page = new StringBuilder();
    page.append("<!doctype html><html><head><meta charset='utf-8'><title>inspect ")
        .append(escape(r.table()))
        .append(
            "</title><style>body{font-family:sans-serif;margin:2em;max-width:60em}td,th{padding:3px 10px;"
                + "text-align:right}th:first-child,td:first-child{text-align:left}</style></head><body>")
        .append("<h1>")
        .append(escape(r.table()))
        .append("</h1>")
        .append(
            "<p>Written by <code>inspect --html</code>. Snapshot figures come from the sink's snapshot summaries "
                + "of the retained history (expired snapshots are gone); file figures from the current snapshot. Bounds "
                + "from the job configuration: ")
        .append(
            String.format(
                Locale.ROOT,
                "T = %s, L = %s, C = %s.</p>",
                mb(t),
                seconds(bounds.maxLatency().toMillis()),
                seconds(bounds.checkpointInterval().toMillis())));
    page.append(summary(r, commits));
    page.append("<h2>File sizes against T</h2><p>Current data files, ")
        .append(SIZE_BINS)
        .append(
            " bins. Files of a partition that stayed open less than L close early, below T.</p>")
        .append(histogram(r.fileSizeList(), t));
    page.append("<h2>Rows and files per sink commit</h2>")
        .append(perCommit(commits, true))
        .append(perCommit(commits, false));
    page.append(
            "<h2>Age at commit against L + C</h2><p>Commit time minus the Kafka timestamp of the batch's oldest "
                + "and newest row. The oldest row's age stays within L + C (plus the write time) when the sink keeps up."
                + "</p>")
        .append(ages(commits, lc));
    page.append(
            "<h2>Close reasons</h2><p>Files per reason, summed over the retained sink commits.</p>")
        .append(reasons(r.closedByReason()));
    return page.append("</body></html>").toString();
  }

  private static String summary(Report r, List<SnapshotRow> commits) {
    StringBuilder t = new StringBuilder("<table>");
    row(t, "snapshots (retained)", r.snapshots() + " (" + r.sinkCommits() + " by the sink)");
    row(t, "last commit", r.lastCommit() == null ? "-" : r.lastCommit());
    row(t, "data files", r.dataFiles() + " in " + r.partitions() + " partitions");
    row(t, "rows", Long.toString(r.rows()));
    row(t, "bytes", Long.toString(r.totalBytes()));
    TableInspection.SizeDistribution d = r.fileSizes();
    row(t, "file size p10 / p50 / p90", mb(d.p10()) + " / " + mb(d.p50()) + " / " + mb(d.p90()));
    row(t, "sink commits shown", Integer.toString(commits.size()));
    return t.append("</table>").toString();
  }

  private static void row(StringBuilder t, String name, String value) {
    t.append("<tr><th>")
        .append(escape(name))
        .append("</th><td>")
        .append(escape(value))
        .append("</td></tr>");
  }

  /**
   * Bars of equal width from 0 to max(largest file, T) plus a little; each bar says its bin and
   * count.
   */
  static String histogram(long[] sizes, long target) {
    long largest = target;
    for (long s : sizes) {
      largest = Math.max(largest, s);
    }
    double top = largest * 1.05 / 1e6;
    double bin = top / SIZE_BINS;
    int[] counts = new int[SIZE_BINS];
    for (long s : sizes) {
      counts[Math.min(SIZE_BINS - 1, (int) (s / 1e6 / bin))]++;
    }
    int most = 1;
    for (int c : counts) {
      most = Math.max(most, c);
    }
    SvgChart chart = new SvgChart(W, H, PAD, top, most, "file size (MB)", "files");
    for (int i = 0; i < SIZE_BINS; i++) {
      if (counts[i] > 0) {
        chart.bar(
            i * bin,
            (i + 1) * bin,
            counts[i],
            SvgChart.COLORS[0],
            String.format(Locale.ROOT, "data-files='%d' data-from-mb='%.3f'", counts[i], i * bin));
      }
    }
    return chart.verticalLine(target / 1e6, "#d95f02", "T = " + mb(target)).toString();
  }

  private static String perCommit(List<SnapshotRow> commits, boolean rows) {
    long t0 = commits.isEmpty() ? 0 : commits.get(0).timestampMs();
    double[] xs = new double[commits.size()];
    double[] ys = new double[commits.size()];
    double maxX = 1;
    double maxY = 1;
    for (int i = 0; i < commits.size(); i++) {
      SnapshotRow s = commits.get(i);
      xs[i] = (s.timestampMs() - t0) / 1e3;
      Long v = rows ? s.rows() : s.files();
      ys[i] = v == null ? 0 : v;
      maxX = Math.max(maxX, xs[i]);
      maxY = Math.max(maxY, ys[i]);
    }
    return new SvgChart(
            W, H, PAD, maxX, maxY, "seconds since the first commit shown", rows ? "rows" : "files")
        .line(
            xs, ys, SvgChart.COLORS[rows ? 0 : 2], rows ? "rows per commit" : "files per commit", 0)
        .toString();
  }

  private static String ages(List<SnapshotRow> commits, double lc) {
    long t0 = commits.isEmpty() ? 0 : commits.get(0).timestampMs();
    List<double[]> oldest = new ArrayList<>();
    List<double[]> newest = new ArrayList<>();
    double maxX = 1;
    double maxY = lc;
    for (SnapshotRow s : commits) {
      double x = (s.timestampMs() - t0) / 1e3;
      maxX = Math.max(maxX, x);
      if (s.maxAgeAtCommitMs() != null) {
        oldest.add(new double[] {x, s.maxAgeAtCommitMs() / 1e3});
        maxY = Math.max(maxY, s.maxAgeAtCommitMs() / 1e3);
      }
      if (s.minAgeAtCommitMs() != null) {
        newest.add(new double[] {x, s.minAgeAtCommitMs() / 1e3});
      }
    }
    SvgChart chart =
        new SvgChart(
            W,
            H,
            PAD,
            maxX,
            maxY * 1.1,
            "seconds since the first commit shown",
            "age at commit (s)");
    chart
        .line(column(oldest, 0), column(oldest, 1), SvgChart.COLORS[1], "oldest row", 0)
        .line(column(newest, 0), column(newest, 1), SvgChart.COLORS[0], "newest row", 1);
    return chart
        .horizontalLine(lc, "#e7298a", String.format(Locale.ROOT, "L + C = %ss", number(lc)))
        .toString();
  }

  private static String reasons(Map<String, Long> byReason) {
    long most = 1;
    for (long n : byReason.values()) {
      most = Math.max(most, n);
    }
    int slots = Math.max(1, byReason.size());
    SvgChart chart = new SvgChart(W, H, PAD, slots, most, "close reason", "files");
    int i = 0;
    for (Map.Entry<String, Long> e : byReason.entrySet()) {
      chart.bar(
          i + 0.15,
          i + 0.85,
          e.getValue(),
          SvgChart.COLORS[i % SvgChart.COLORS.length],
          String.format(
              Locale.ROOT, "data-reason='%s' data-files='%d'", escape(e.getKey()), e.getValue()));
      chart.text(i + 0.15, e.getValue(), escape(e.getKey()) + " " + e.getValue());
      i++;
    }
    return chart.toString();
  }

  private static double[] column(List<double[]> points, int k) {
    return points.stream().mapToDouble(p -> p[k]).toArray();
  }

  private static String mb(long bytes) {
    return String.format(Locale.ROOT, "%.2f MB", bytes / 1e6);
  }

  private static String seconds(long millis) {
    return number(millis / 1e3) + "s";
  }

  private static String number(double v) {
    return v == Math.rint(v)
        ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.1f", v);
  }

  static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
  }
}
