package dev.muster.lab.sim;

import dev.muster.Durations;
import dev.muster.InvalidInputException;
import java.time.Duration;
import java.util.Locale;

/** What the sim's classes share: seconds as doubles for the sampling loops, and the error for a bad input. */
final class Sims {
  private Sims() {}

  static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }

  static Duration duration(double seconds) {
    return Duration.ofNanos(Math.round(seconds * 1e9));
  }

  /** {@code d} as the command line writes it: {@code 5s}, {@code 500ms}. */
  static String format(Duration d) {
    return d.toNanos() % 1_000_000 == 0 ? Durations.format(d) : String.format(Locale.ROOT, "%.3fs", seconds(d));
  }

  /** {@code field} (the flag the user gave it under) is {@code value}, which breaks the rule {@code allowed}. */
  static InvalidInputException invalid(String field, Object value, String allowed) {
    return new InvalidInputException(field, value instanceof Duration d ? format(d) : value, allowed);
  }
}
