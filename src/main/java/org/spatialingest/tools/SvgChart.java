package org.spatialingest.tools;

import java.util.Locale;

/**
 * A small inline SVG chart for the self-contained HTML pages ({@code inspect --html}, the lag lab's
 * {@code lab.html}): a frame with axes from 0 to the given maxima, and marks placed in data units.
 * No script, no external resource.
 */
public final class SvgChart {
  public static final String[] COLORS = {
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"
  };

  private final StringBuilder svg = new StringBuilder();
  private final int width;
  private final int height;
  private final int pad;
  private final double maxX;
  private final double maxY;

  /**
   * A chart {@code width} x {@code height} px, axes {@code pad} px in, x in [0, maxX], y in [0,
   * maxY].
   */
  public SvgChart(
      int width, int height, int pad, double maxX, double maxY, String xLabel, String yLabel) {
    this.width = width;
    this.height = height;
    this.pad = pad;
    this.maxX = maxX <= 0 ? 1 : maxX;
    this.maxY = maxY <= 0 ? 1 : maxY;
    svg.append(
        String.format(
            Locale.ROOT,
            "<svg width='%d' height='%d' xmlns='http://www.w3.org/2000/svg'>",
            width,
            height));
    axes(svg, width, height, pad, maxX, maxY, xLabel, yLabel);
  }

  /** The axes of a chart (also used by charts that place their marks themselves). */
  public static void axes(
      StringBuilder svg,
      int w,
      int h,
      int pad,
      double maxX,
      double maxY,
      String xLabel,
      String yLabel) {
    svg.append(
        String.format(
            "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>",
            pad, h - pad, w - pad, h - pad));
    svg.append(
        String.format(
            "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>", pad, pad, pad, h - pad));
    svg.append(
        String.format(
            Locale.ROOT, "<text x='%d' y='%d' font-size='11'>%s</text>", 5, pad + 4, number(maxY)));
    if (maxX > 0) {
      svg.append(
          String.format(
              Locale.ROOT,
              "<text x='%d' y='%d' font-size='11'>%s</text>",
              w - pad - 10,
              h - pad + 30,
              number(maxX)));
    }
    svg.append(
        String.format("<text x='%d' y='%d' font-size='12'>%s</text>", w / 2 - 100, h - 8, xLabel));
    svg.append(String.format("<text x='5' y='%d' font-size='12'>%s</text>", pad - 12, yLabel));
  }

  public double x(double value) {
    return pad + value / maxX * (width - 2 * pad);
  }

  public double y(double value) {
    return height - pad - value / maxY * (height - 2 * pad);
  }

  /**
   * A line through the points (xs[i], ys[i]), each point also marked, with a legend entry in slot
   * {@code legend}.
   */
  public SvgChart line(double[] xs, double[] ys, String color, String name, int legend) {
    StringBuilder pts = new StringBuilder();
    for (int i = 0; i < xs.length; i++) {
      pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(xs[i]), y(ys[i])));
    }
    svg.append(
        String.format(
            "<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>", color, pts));
    for (int i = 0; i < xs.length; i++) {
      svg.append(
          String.format(
              Locale.ROOT,
              "<circle class='point' cx='%.1f' cy='%.1f' r='2.5' fill='%s'/>",
              x(xs[i]),
              y(ys[i]),
              color));
    }
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x='%d' y='%d' fill='%s' font-size='12'>%s</text>",
            width - 190,
            20 + 16 * legend,
            color,
            name));
    return this;
  }

  /**
   * A bar over [x0, x1] of height {@code value}; {@code data} goes into its {@code data-*}
   * attributes.
   */
  public SvgChart bar(double x0, double x1, double value, String color, String data) {
    double top = y(value);
    svg.append(
        String.format(
            Locale.ROOT,
            "<rect class='bar' %s x='%.1f' y='%.1f' width='%.1f' height='%.1f' " + "fill='%s'/>",
            data,
            x(x0),
            top,
            Math.max(1, x(x1) - x(x0) - 1),
            height - pad - top,
            color));
    return this;
  }

  /** A labelled vertical reference line at {@code x}. */
  public SvgChart verticalLine(double xValue, String color, String label) {
    double px = x(xValue);
    svg.append(
        String.format(
            Locale.ROOT,
            "<line class='ref' x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='%s' "
                + "stroke-dasharray='6,4' stroke-width='2'/>",
            px,
            pad,
            px,
            height - pad,
            color));
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x='%.1f' y='%d' fill='%s' font-size='12'>%s</text>",
            px + 4,
            pad + 12,
            color,
            label));
    return this;
  }

  /** A labelled horizontal reference line at {@code y}. */
  public SvgChart horizontalLine(double yValue, String color, String label) {
    double py = y(yValue);
    svg.append(
        String.format(
            Locale.ROOT,
            "<line class='ref' x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' "
                + "stroke-dasharray='6,4' stroke-width='2'/>",
            pad,
            py,
            width - pad,
            py,
            color));
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x='%d' y='%.1f' fill='%s' font-size='12'>%s</text>",
            pad + 6,
            py - 4,
            color,
            label));
    return this;
  }

  /** A text at data position (x, y). */
  public SvgChart text(double xValue, double yValue, String text) {
    svg.append(
        String.format(
            Locale.ROOT,
            "<text x='%.1f' y='%.1f' font-size='11'>%s</text>",
            x(xValue),
            y(yValue) - 3,
            text));
    return this;
  }

  @Override
  public String toString() {
    return svg + "</svg>";
  }

  private static String number(double v) {
    return v >= 100 || v == Math.rint(v)
        ? String.format(Locale.ROOT, "%.0f", v)
        : String.format(Locale.ROOT, "%.2f", v);
  }
}
