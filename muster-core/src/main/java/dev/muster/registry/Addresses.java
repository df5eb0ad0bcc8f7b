package dev.muster.registry;

import dev.muster.InvalidInputException;
import java.util.regex.Pattern;

/**
 * Validation of {@link Instance#address()}: a host name or an IPv4/IPv6 literal, with no scheme, port, brackets or
 * spaces. No DNS lookup is made (so validation never blocks): only the syntax is checked. Stateless.
 *
 * <p>Host names are dot-separated labels of letters (either case), digits, '-' and '_' (underscores are outside
 * RFC 1123 but Docker and Compose service names use them and resolve), at most 253 characters. A name made only
 * of digits and dots must be a valid IPv4 address, so a typo like {@code 10.0.0.256} is caught.
 */
final class Addresses {
  static final String RULE = "use a host name or an IPv4/IPv6 literal without scheme, port or brackets,"
      + " e.g. 10.0.0.7, fd00::7 or orders.internal";

  private static final Pattern HOST_LABEL = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?");
  private static final Pattern WITH_PORT = Pattern.compile("[^:]*:[0-9]+");
  private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");
  private static final Pattern DECIMAL_OCTET = Pattern.compile("0|[1-9][0-9]{0,2}");

  private Addresses() {}

  static String requireValid(String address) {
    if (address == null || address.isBlank()) {
      throw new InvalidInputException("address", address, RULE);
    }
    if (address.contains("://")) {
      throw new InvalidInputException("address", address, "remove the scheme; " + RULE);
    }
    if (address.chars().anyMatch(Character::isWhitespace)) {
      throw new InvalidInputException("address", address, "remove the spaces; " + RULE);
    }
    if (address.startsWith("[")) {
      throw new InvalidInputException("address", address, "write IPv6 literals without brackets; " + RULE);
    }
    if (WITH_PORT.matcher(address).matches()) {
      throw new InvalidInputException("address", address, "remove the port; it goes in the port field; " + RULE);
    }
    boolean valid = address.indexOf(':') >= 0 ? isIpv6(address) : isIpv4OrHostName(address);
    if (!valid) {
      throw new InvalidInputException("address", address, RULE);
    }
    return address;
  }

  static boolean isIpv4OrHostName(String s) {
    if (s.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
      return isIpv4(s);
    }
    if (s.length() > 253) {
      return false;
    }
    for (String label : s.split("\\.", -1)) {
      if (!HOST_LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  static boolean isIpv4(String s) {
    String[] octets = s.split("\\.", -1);
    if (octets.length != 4) {
      return false;
    }
    for (String octet : octets) {
      if (!DECIMAL_OCTET.matcher(octet).matches() || Integer.parseInt(octet) > 255) {
        return false;
      }
    }
    return true;
  }

  /**
   * RFC 4291 text form: eight groups of 1-4 hex digits, at most one "::" standing for one or more zero groups, and
   * optionally an IPv4 address in place of the last two groups. Zone ids ({@code %eth0}) are not accepted.
   */
  static boolean isIpv6(String s) {
    int gap = s.indexOf("::");
    if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) {
      return false;
    }
    String[] halves = gap >= 0 ? new String[] {s.substring(0, gap), s.substring(gap + 2)} : new String[] {s};
    int groups = 0;
    for (int h = 0; h < halves.length; h++) {
      if (halves[h].isEmpty()) {
        continue;
      }
      String[] parts = halves[h].split(":", -1);
      for (int i = 0; i < parts.length; i++) {
        boolean lastOfAddress = h == halves.length - 1 && i == parts.length - 1;
        if (lastOfAddress && parts[i].indexOf('.') >= 0) {
          if (!isIpv4(parts[i])) {
            return false;
          }
          groups += 2;
        } else if (HEX_GROUP.matcher(parts[i]).matches()) {
          groups++;
        } else {
          return false;
        }
      }
    }
    return gap >= 0 ? groups <= 7 : groups == 8;
  }
}
