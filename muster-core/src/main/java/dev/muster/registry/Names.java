package dev.muster.registry;

import dev.muster.InvalidInputException;

/**
 * The naming rule for {@code namespace}, {@code service}, {@code version}, instance id and key root (SPEC §2):
 * 1-63 characters of {@code [a-z0-9-]}, starting and ending with a letter or digit, so every name is a DNS label
 * and DNS-SD can serve it. Stateless.
 */
public final class Names {
  /** The longest valid name. */
  public static final int MAX_LENGTH = 63;

  /** The rule as an instruction, used in every message about a bad name. */
  public static final String RULE =
      "use 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit";

  private Names() {}

  /**
   * Whether {@code value} is a valid name; {@code null} is not. A loop, not a regular expression: every key and
   * value a cache decodes checks four names twice, and the regex was the largest single cost of a 10,000-instance
   * resync in the bench's profile (JFR).
   */
  public static boolean isValid(String value) {
    return value != null && isValid(value, 0, value.length());
  }

  /**
   * Whether {@code text.substring(from, to)} is a valid name, without making that substring: a cache checks the
   * segments of every key it parses in place ({@link RegistryLayout#keyParser()}).
   */
  static boolean isValid(String text, int from, int to) {
    if (to <= from || to - from > MAX_LENGTH) {
      return false;
    }
    int last = to - 1;
    for (int i = from; i <= last; i++) {
      char c = text.charAt(i);
      boolean alphanumeric = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (!alphanumeric && (c != '-' || i == from || i == last)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns {@code value} if it is a valid name.
   *
   * @param field what the name is, for the message ({@code service}, {@code zone}, ...)
   * @throws InvalidInputException naming {@code field} and {@code value} (also when it is null or empty)
   */
  public static String requireValid(String field, String value) {
    if (!isValid(value)) {
      throw new InvalidInputException(field, value, RULE);
    }
    return value;
  }
}
