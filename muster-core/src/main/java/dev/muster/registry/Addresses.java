package dev.muster.registry;

import dev.muster.InvalidInputException;

/**
 * Validation of {@link Instance#address()}: a host name or an IPv4/IPv6 literal, with no scheme, port, brackets or
 * spaces. No DNS lookup is made (so validation never blocks): only the syntax is checked. Stateless.
 *
 * <p>Host names are dot-separated labels of letters (either case), digits, '-' and '_' (underscores are outside
 * RFC 1123 but Docker and Compose service names use them and resolve), at most 253 characters. A name made only
 * of digits and dots must be a valid IPv4 address, so a typo like {@code 10.0.0.256} is caught.
 *
 * <p>Written as loops over index ranges, not regular expressions and {@code split}: every PUT a cache decodes checks
 * its address, and the matchers and substrings were a tenth of a PUT's allocation (JFR, {@code ApplyBenchmark}).
 * {@code AddressesTest} holds these loops to the former regular expressions over a large corpus.
 */
final class Addresses {
  static final String RULE = "use a host name or an IPv4/IPv6 literal without scheme, port or brackets,"
      + " e.g. 10.0.0.7, fd00::7 or orders.internal";

  private static final int MAX_HOST_NAME = 253;
  private static final int MAX_LABEL = 63;

  private Addresses() {}

  static String requireValid(String address) {
    if (address == null || address.isBlank()) {
      throw new InvalidInputException("address", address, RULE);
    }
    if (address.contains("://")) {
      throw new InvalidInputException("address", address, "remove the scheme; " + RULE);
    }
    if (hasWhitespace(address)) {
      throw new InvalidInputException("address", address, "remove the spaces; " + RULE);
    }
    if (address.startsWith("[")) {
      throw new InvalidInputException("address", address, "write IPv6 literals without brackets; " + RULE);
    }
    if (hasPort(address)) {
      throw new InvalidInputException("address", address, "remove the port; it goes in the port field; " + RULE);
    }
    boolean valid = address.indexOf(':') >= 0 ? isIpv6(address) : isIpv4OrHostName(address);
    if (!valid) {
      throw new InvalidInputException("address", address, RULE);
    }
    return address;
  }

  private static boolean hasWhitespace(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isWhitespace(s.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** "anything without a colon, one colon, one or more digits": host:port, which is never a valid IPv6 literal. */
  private static boolean hasPort(String s) {
    int colon = s.indexOf(':');
    return colon >= 0 && colon + 1 < s.length() && s.indexOf(':', colon + 1) < 0
        && allDigits(s, colon + 1, s.length());
  }

  static boolean isIpv4OrHostName(String s) {
    if (onlyDigitsAndDots(s)) {
      return isIpv4(s);
    }
    if (s.length() > MAX_HOST_NAME) {
      return false;
    }
    int start = 0;
    for (int i = 0; i <= s.length(); i++) {
      if (i == s.length() || s.charAt(i) == '.') {
        if (!isHostLabel(s, start, i)) {
          return false;
        }
        start = i + 1;
      }
    }
    return true;
  }

  /** 1-63 of [A-Za-z0-9_-], not starting or ending with '-'. */
  private static boolean isHostLabel(String s, int from, int to) {
    int length = to - from;
    if (length < 1 || length > MAX_LABEL || s.charAt(from) == '-' || s.charAt(to - 1) == '-') {
      return false;
    }
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
          || c == '-';
      if (!allowed) {
        return false;
      }
    }
    return true;
  }

  static boolean isIpv4(String s) {
    return isIpv4(s, 0, s.length());
  }

  /** Four dot-separated decimal octets 0-255 in {@code s[from, to)}, without leading zeros. */
  private static boolean isIpv4(String s, int from, int to) {
    int octets = 0;
    int i = from;
    while (true) {
      int start = i;
      int value = 0;
      while (i < to && isDigit(s.charAt(i))) {
        if (i - start == 3) {
          return false; // a fourth digit
        }
        value = value * 10 + (s.charAt(i) - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || (digits > 1 && s.charAt(start) == '0') || value > 255) {
        return false;
      }
      octets++;
      if (i == to) {
        return octets == 4;
      }
      if (s.charAt(i) != '.' || octets == 4) {
        return false;
      }
      i++;
    }
  }

  /**
   * RFC 4291 text form: eight groups of 1-4 hex digits, at most one "::" standing for one or more zero groups, and
   * optionally an IPv4 address in place of the last two groups. Zone ids ({@code %eth0}) are not accepted.
   */
  static boolean isIpv6(String s) {
    int gap = s.indexOf("::");
    if (gap < 0) {
      return groups(s, 0, s.length(), true) == 8;
    }
    if (s.indexOf("::", gap + 1) >= 0) {
      return false;
    }
    int before = groups(s, 0, gap, false);
    int after = groups(s, gap + 2, s.length(), true);
    return before >= 0 && after >= 0 && before + after <= 7;
  }

  /**
   * The groups in the colon-separated half {@code s[from, to)} (0 if empty), an IPv4 tail counting two; -1 if a part
   * is not a group. Only the address's last part ({@code endsAddress}) may be an IPv4 address.
   */
  private static int groups(String s, int from, int to, boolean endsAddress) {
    if (from == to) {
      return 0;
    }
    int groups = 0;
    int start = from;
    for (int i = from; i <= to; i++) {
      if (i < to && s.charAt(i) != ':') {
        continue;
      }
      if (endsAddress && i == to && contains(s, start, to, '.')) {
        if (!isIpv4(s, start, to)) {
          return -1;
        }
        groups += 2;
      } else if (isHexGroup(s, start, i)) {
        groups++;
      } else {
        return -1;
      }
      start = i + 1;
    }
    return groups;
  }

  private static boolean isHexGroup(String s, int from, int to) {
    if (to - from < 1 || to - from > 4) {
      return false;
    }
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (!isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F')) {
        return false;
      }
    }
    return true;
  }

  private static boolean onlyDigitsAndDots(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) != '.' && !isDigit(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean allDigits(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      if (!isDigit(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean contains(String s, int from, int to, char c) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        return true;
      }
    }
    return false;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
