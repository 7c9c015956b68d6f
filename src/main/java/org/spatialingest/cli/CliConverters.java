package org.spatialingest.cli;

import java.time.Duration;
import org.spatialingest.sizing.Units;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * picocli converters for sizes and durations; picocli prefixes their messages with the option name.
 */
final class CliConverters {
  private CliConverters() {}

  static final class SizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      try {
        return Units.parseBytes(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return Units.parseDuration(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }
}
