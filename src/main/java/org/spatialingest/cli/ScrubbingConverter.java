package org.spatialingest.cli;

import java.util.List;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.plugins.Plugin;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.apache.logging.log4j.core.pattern.ConverterKeys;
import org.apache.logging.log4j.core.pattern.LogEventPatternConverter;
import org.apache.logging.log4j.core.pattern.PatternConverter;
import org.apache.logging.log4j.core.pattern.PatternFormatter;
import org.spatialingest.config.Secrets;

/**
 * The log4j pattern converter {@code %scrubbed{pattern}}: formats {@code pattern} (e.g. {@code
 * %m%n%xEx}) and passes the text through {@link Secrets#scrub}, so every line of the local log file
 * and console (ours, Flink's, Kafka's, a stack trace's) is shown as every other output is. Used by
 * {@code spatial-ingest-local-log4j2.properties}; registered by log4j's annotation processor at
 * compile time.
 */
@Plugin(name = "scrubbed", category = PatternConverter.CATEGORY)
@ConverterKeys({"scrubbed"})
public final class ScrubbingConverter extends LogEventPatternConverter {
  private final List<PatternFormatter> formatters;

  private ScrubbingConverter(List<PatternFormatter> formatters) {
    super("scrubbed", "scrubbed");
    this.formatters = formatters;
  }

  /** Called by log4j with the converter's options: {@code options[0]} is the inner pattern. */
  public static ScrubbingConverter newInstance(Configuration config, String[] options) {
    if (options == null || options.length != 1) {
      throw new IllegalArgumentException("%scrubbed takes one pattern: %scrubbed{%m%n}");
    }
    return new ScrubbingConverter(PatternLayout.createPatternParser(config).parse(options[0]));
  }

  @Override
  public void format(LogEvent event, StringBuilder toAppendTo) {
    StringBuilder text = new StringBuilder();
    for (PatternFormatter formatter : formatters) {
      formatter.format(event, text);
    }
    toAppendTo.append(Secrets.scrub(text.toString()));
  }

  /** True if the inner pattern prints the throwable, so log4j does not append it unscrubbed. */
  @Override
  public boolean handlesThrowable() {
    return formatters.stream().anyMatch(PatternFormatter::handlesThrowable);
  }
}
