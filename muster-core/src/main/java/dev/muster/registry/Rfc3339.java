package dev.muster.registry;

import java.time.Instant;

/**
 * A fast path for {@link Instant#parse} on the one shape {@link InstanceCodec#encode} writes ({@link
 * Instant#toString} of a time in years 0-9999): {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z}. Anything else (an offset,
 * lower case, a leap second, 24:00, a year beyond 9999, a day the month does not have) returns null and the caller
 * uses {@link Instant#parse}, so this only ever agrees with it ({@code Rfc3339Test} holds it to {@code Instant.parse}).
 * Reads bytes so the decoder need not make a string of the time; allocates only the result. Stateless.
 */
final class Rfc3339 {
  private static final int DAYS_0000_TO_1970 = 719_528;
  private static final int SHORTEST = "0000-00-00T00:00:00Z".length();

  private Rfc3339() {}

  /** The instant {@code b[from, to)} spells in the encoder's shape, or null if it is not in that shape. */
  static Instant parseCanonical(byte[] b, int from, int to) {
    return parseCanonical(b, from, to, null);
  }

  /** As {@link #parseCanonical(byte[], int, int)}, but {@code same} itself if it is the instant spelled (may be null). */
  static Instant parseCanonical(byte[] b, int from, int to, Instant same) {
    if (to - from < SHORTEST || to - from > SHORTEST + 10 || b[to - 1] != 'Z' || b[from + 4] != '-'
        || b[from + 7] != '-' || b[from + 10] != 'T' || b[from + 13] != ':' || b[from + 16] != ':') {
      return null;
    }
    int year = digits(b, from, 4);
    int month = digits(b, from + 5, 2);
    int day = digits(b, from + 8, 2);
    int hour = digits(b, from + 11, 2);
    int minute = digits(b, from + 14, 2);
    int second = digits(b, from + 17, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > lengthOfMonth(year, month) || hour < 0 || hour > 23
        || minute < 0 || minute > 59 || second < 0 || second > 59) {
      return null;
    }
    int nanos = 0;
    int fractionFrom = from + 19;
    int fractionTo = to - 1;
    if (fractionTo > fractionFrom) {
      int count = fractionTo - fractionFrom - 1;
      if (b[fractionFrom] != '.' || count < 1 || (nanos = digits(b, fractionFrom + 1, count)) < 0) {
        return null;
      }
      for (int i = count; i < 9; i++) {
        nanos *= 10;
      }
    }
    long seconds = epochDay(year, month, day) * 86_400L + hour * 3_600L + minute * 60L + second;
    if (same != null && same.getEpochSecond() == seconds && same.getNano() == nanos) {
      return same;
    }
    return Instant.ofEpochSecond(seconds, nanos);
  }

  /** The decimal value of {@code count} ASCII digits at {@code from}, or -1 if one is not a digit. */
  private static int digits(byte[] b, int from, int count) {
    int value = 0;
    for (int i = from; i < from + count; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      value = value * 10 + d;
    }
    return value;
  }

  private static boolean isLeap(int year) {
    return (year & 3) == 0 && (year % 100 != 0 || year % 400 == 0);
  }

  private static int lengthOfMonth(int year, int month) {
    return switch (month) {
      case 2 -> isLeap(year) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  /** As {@code LocalDate.toEpochDay} (proleptic Gregorian), for years 0-9999. */
  private static long epochDay(int year, int month, int day) {
    long y = year;
    long total = 365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400;
    total += (367 * month - 362) / 12;
    total += day - 1;
    if (month > 2) {
      total--;
      if (!isLeap(year)) {
        total--;
      }
    }
    return total - DAYS_0000_TO_1970;
  }
}
