package org.spatialingest.tools;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Type;
import org.spatialingest.config.ConfigException;

/**
 * A {@code --partition} selector: {@code day=2026-11-29} or {@code hour=2026-11-29-10} select the
 * table's day or hour partition of that time (whatever the partition field is called); {@code
 * FIELD=VALUE} selects by partition field name and Iceberg's human-readable value (as in the
 * partition path, e.g. {@code event_time_day=2026-11-29}).
 */
public record PartitionFilter(String key, String value) {
  private static final DateTimeFormatter HOUR =
      DateTimeFormatter.ofPattern("yyyy-MM-dd-HH", Locale.ROOT);

  public static PartitionFilter parse(String text) {
    int eq = text == null ? -1 : text.indexOf('=');
    if (eq <= 0 || eq == text.length() - 1) {
      throw new ConfigException(
          "--partition '"
              + text
              + "' must look like day=2026-11-29, hour=2026-11-29-10 or"
              + " FIELD=VALUE");
    }
    PartitionFilter f =
        new PartitionFilter(text.substring(0, eq).trim(), text.substring(eq + 1).trim());
    if (f.key.equals("day")) {
      f.dayStart();
    } else if (f.key.equals("hour")) {
      f.hourStart();
    }
    return f;
  }

  @Override
  public String toString() {
    return key + "=" + value;
  }

  /** The partition's fields as {@code name -> human value}, in spec order. */
  public static Map<String, String> humanValues(PartitionSpec spec, StructLike partition) {
    Map<String, String> out = new LinkedHashMap<>();
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      PartitionField field = fields.get(i);
      Type sourceType = spec.schema().findType(field.sourceId());
      Object v = partition.get(i, Object.class);
      @SuppressWarnings("unchecked")
      Transform<Object, Object> t = (Transform<Object, Object>) field.transform();
      out.put(field.name(), t.toHumanString(t.getResultType(sourceType), v));
    }
    return out;
  }

  /** The partition as Iceberg's path, e.g. {@code event_time_day=2026-11-29}. */
  public static String label(PartitionSpec spec, StructLike partition) {
    return spec.partitionToPath(partition);
  }

  public boolean matches(PartitionSpec spec, StructLike partition) {
    List<PartitionField> fields = spec.fields();
    Map<String, String> human = humanValues(spec, partition);
    for (PartitionField field : fields) {
      String transform = field.transform().toString();
      boolean keyMatches =
          field.name().equals(key)
              || (key.equals("day") && transform.equals("day"))
              || (key.equals("hour") && transform.equals("hour"));
      if (keyMatches && value.equals(human.get(field.name()))) {
        return true;
      }
    }
    return false;
  }

  /**
   * A row filter selecting exactly this partition's files in a scan: a time range on the source
   * column for {@code day}/{@code hour} (and day/hour fields named explicitly), equality for
   * identity fields.
   */
  public Expression rowFilter(Table table) {
    PartitionSpec spec = table.spec();
    for (PartitionField field : spec.fields()) {
      String transform = field.transform().toString();
      String column = table.schema().findColumnName(field.sourceId());
      boolean byName = field.name().equals(key);
      if ((key.equals("day") && transform.equals("day")) || (byName && transform.equals("day"))) {
        long start = dayStart();
        return range(column, start, start + 86_400_000_000L);
      }
      if ((key.equals("hour") && transform.equals("hour"))
          || (byName && transform.equals("hour"))) {
        long start = hourStart();
        return range(column, start, start + 3_600_000_000L);
      }
      if (byName && transform.equals("identity")) {
        return Expressions.equal(column, value);
      }
    }
    throw new ConfigException(
        "--partition "
            + this
            + ": the table's partition spec "
            + spec.fields()
            + " has no matching day, hour or identity field");
  }

  /**
   * Start of the partition's time range in epoch millis, for day/hour selectors and day/hour
   * fields.
   */
  static long startMillis(PartitionSpec spec, StructLike partition) {
    List<PartitionField> fields = spec.fields();
    for (int i = 0; i < fields.size(); i++) {
      String transform = fields.get(i).transform().toString();
      Integer ordinal = partition.get(i, Integer.class);
      if (ordinal == null) {
        continue;
      }
      if (transform.equals("day")) {
        return ordinal * 86_400_000L;
      }
      if (transform.equals("hour")) {
        return ordinal * 3_600_000L;
      }
    }
    return Long.MIN_VALUE;
  }

  private static Expression range(String column, long startMicros, long endMicros) {
    return Expressions.and(
        Expressions.greaterThanOrEqual(column, startMicros),
        Expressions.lessThan(column, endMicros));
  }

  private long dayStart() {
    try {
      return LocalDate.parse(value).atStartOfDay(ZoneOffset.UTC).toEpochSecond() * 1_000_000L;
    } catch (DateTimeParseException e) {
      throw new ConfigException("--partition " + this + ": day must be YYYY-MM-DD");
    }
  }

  private long hourStart() {
    try {
      return LocalDateTime.parse(value, HOUR).toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
    } catch (DateTimeParseException e) {
      throw new ConfigException("--partition " + this + ": hour must be YYYY-MM-DD-HH");
    }
  }
}
