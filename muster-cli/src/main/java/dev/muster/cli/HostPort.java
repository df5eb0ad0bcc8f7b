package dev.muster.cli;

import dev.muster.InvalidInputException;

/**
 * The {@code --address HOST:PORT} of {@code muster register}, split on the last ':' so IPv6 literals work when
 * bracketed ({@code [fd00::7]:8080}). Only the shape is checked here; whether the host and port are valid is
 * {@link dev.muster.registry.Instance}'s rule, so its message (naming {@code address} or {@code port}) is what the
 * user sees for, say, {@code http://x:80} or port 70000.
 */
record HostPort(String host, int port) {
  private static final String FORMAT = "write it as HOST:PORT, e.g. 10.0.0.7:8080, orders.internal:8080 or"
      + " [fd00::7]:8080";

  static HostPort parse(String value) {
    return parse("--address", value);
  }

  /** As {@link #parse(String)}, naming {@code option} in the message. */
  static HostPort parse(String option, String value) {
    int colon = value.lastIndexOf(':');
    if (colon < 0) {
      throw new InvalidInputException(option, value, "the port is missing; " + FORMAT);
    }
    String host = value.substring(0, colon);
    String port = value.substring(colon + 1);
    if (port.isEmpty() || port.length() > 9 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new InvalidInputException(option, value, "the port is not a number 1-65535; " + FORMAT);
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.indexOf(':') >= 0 && !host.contains("://")) {
      throw new InvalidInputException(option, value, "put an IPv6 address in brackets; " + FORMAT);
    }
    return new HostPort(host, Integer.parseInt(port));
  }
}
