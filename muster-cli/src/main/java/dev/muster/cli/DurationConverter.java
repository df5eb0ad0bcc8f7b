package dev.muster.cli;

import dev.muster.Durations;
import dev.muster.InvalidInputException;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses durations written as SPEC §7 says ({@link Durations}): {@code 500ms}, {@code 3s}, {@code 2m}, {@code 1h}. */
final class DurationConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return Durations.parse("duration", value);
    } catch (InvalidInputException e) {
      throw new TypeConversionException("'" + value + "' is not a duration: write it like 500ms, 3s or 2m");
    }
  }
}
