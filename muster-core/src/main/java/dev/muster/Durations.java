package dev.muster;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as Muster writes them everywhere (SPEC §7): {@code 500ms}, {@code 3s}, {@code 2m}, {@code 1h}. The
 * command line's flags and {@code EtcdConfig}'s settings read them the same way. Stateless.
 */
public final class Durations {
  private static final Pattern FORMAT = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

  private Durations() {}

  /**
   * Parses {@code value}.
   *
   * @param field the name the value came under, for the error message
   * @throws InvalidInputException the value is missing or not written like {@code 500ms}, {@code 3s} or {@code 2m}
   */
  public static Duration parse(String field, String value) {
    Matcher m = value == null ? null : FORMAT.matcher(value.trim());
    if (m == null || !m.matches()) {
      throw new InvalidInputException(field, value, "write a duration like 500ms, 3s or 2m");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  /** {@code d} the way {@link #parse} reads it: {@code 12s}, {@code 1500ms}, {@code 2m}. */
  public static String format(Duration d) {
    return Messages.duration(d);
  }
}
