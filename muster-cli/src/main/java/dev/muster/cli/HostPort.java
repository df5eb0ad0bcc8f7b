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

  /**
   * The {@code --listen IP:PORT} of a server command: the host must be an IP literal (a name would need a lookup);
   * port 0 picks a free one. {@code examplePort} goes into the message.
   */
  static java.net.InetSocketAddress listenAddress(String value, String examplePort) {
    HostPort hp = parse("--listen", value);
    if (hp.port() < 0 || hp.port() > 65_535) {
      throw new Errors.UsageException("--listen " + value + ": the port is not 0-65535");
    }
    try {
      if (!Character.isDigit(hp.host().isEmpty() ? 'x' : hp.host().charAt(0)) && hp.host().indexOf(':') < 0) {
        throw new java.net.UnknownHostException(hp.host());
      }
      return new java.net.InetSocketAddress(java.net.InetAddress.getByName(hp.host()), hp.port());
    } catch (java.net.UnknownHostException e) {
      throw new Errors.UsageException("--listen " + value + ": use an IP address such as 127.0.0.1:" + examplePort
          + " or [::1]:" + examplePort + ", not a host name");
    }
  }
}
