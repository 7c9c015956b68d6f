package org.spatialingest.geometry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.spatialingest.config.ConfigException;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.TelemetryTable;

/**
 * Loads {@code regions.bootstrap}: boundary refresh records, one per line in the job's input
 * format, parsed by the same {@link TelemetryParser} as the stream, so that rows enriched before
 * the stream's first refreshes arrive already get their region. Read once, where the job is built;
 * the regions travel inside the job graph.
 */
public final class RegionBootstrap {
  private RegionBootstrap() {}

  /**
   * The refreshes of the file (empty without {@code regions.bootstrap}); a line that is not one
   * fails, naming it.
   */
  public static List<RegionRefresh> load(JobConfig config) {
    String path = config.regions().bootstrap();
    if (path.isEmpty()) {
      return List.of();
    }
    TelemetryParser parser = new TelemetryParser(HilbertCurve.CRS84, config);
    List<RegionRefresh> refreshes = new ArrayList<>();
    List<String> lines;
    try {
      lines =
          Files.readAllLines(
              Path.of(path.startsWith("file:") ? path.substring("file:".length()) : path),
              StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException("regions.bootstrap: cannot read " + path + ": " + e.getMessage());
    }
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).isBlank()) {
        continue;
      }
      try {
        ParsedRow parsed = parser.parse(lines.get(i).getBytes(StandardCharsets.UTF_8), 0);
        String region = parsed.refreshRegion();
        if (region == null) {
          throw new ConfigException(
              "regions.bootstrap: line "
                  + (i + 1)
                  + " of "
                  + path
                  + " is not a boundary refresh "
                  + "(properties.kind must be '"
                  + config.regions().refreshKind()
                  + "')");
        }
        refreshes.add(
            new RegionRefresh(
                region,
                (byte[]) parsed.row().getField(TelemetryTable.GEOMETRY),
                parsed.eventMillis()));
      } catch (RecordRejectedException e) {
        throw new ConfigException(
            "regions.bootstrap: line "
                + (i + 1)
                + " of "
                + path
                + " is rejected ("
                + e.reason().code()
                + "): "
                + e.getMessage());
      } catch (UncheckedIOException e) {
        throw new ConfigException(
            "regions.bootstrap: line " + (i + 1) + " of " + path + ": " + e.getMessage());
      }
    }
    return refreshes;
  }
}
