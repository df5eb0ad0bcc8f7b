package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.InvalidInputException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link Addresses} (loops) accepts and rejects exactly what its former regular-expression implementation did, with
 * the same message, over hand-picked edge cases and about 200,000 generated and mutated addresses.
 */
class AddressesTest {
  private static final List<String> EDGES = List.of(
      "10.0.0.7", "0.0.0.0", "255.255.255.255", "10.0.0.256", "256.0.0.1", "01.2.3.4", "1.02.3.4", "1.2.3.04",
      "1.2.3", "1.2.3.4.5", "1.2.3.4.", ".1.2.3.4", "1..2.3", "1000.1.1.1", "00.0.0.0", "0.0.0.00", "...", ".", "1",
      "999.999.999.999", "1.2.3.4a", "a1.2.3.4", "::", "::1", "1::", "fd00::7", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9", "1::2::3", ":::", "1:::2", "12345::", "::1.2.3", "::ffff:10.0.0.7", "::ffff:10.0.0.256",
      "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "1.2.3.4::1", "::1.2.3.4:1", "1:2:3:4:5::1.2.3.4",
      "1:2:3:4:5:6::1.2.3.4", "fe80::1%eth0", "FE80::ABCD", "g::1", "::g", "1:", ":1", "1::2:", ":1::2", "[::1]",
      "[::1]:80", "x:80", "x:", ":80", "x:80:1", "x:8a", "x:٣", "10.0.0.7:8080", "http://h", "h://", "a b", "a\tb",
      "a\u2003b", " ", "", "-host", "host-", "a..b", "host.", ".host", "h", "H_1", "_", "-", "a-b", "a_b.c-d",
      "orders.internal", "Orders.Example.COM", "host/path", "höst", "a%b", "1.2.3.4\n", "1e1.2.3.4",
      "a".repeat(63), "a".repeat(64), "a".repeat(63) + "." + "b".repeat(63), label(63) + "-", "-" + label(62));

  private static String label(int n) {
    return "x".repeat(n);
  }

  @Test
  void theLoopsDecideAndWordEveryEdgeCaseAsTheRegularExpressionsDid() {
    for (String address : EDGES) {
      assertSame(address);
    }
    assertSame(null);
    assertSame(hostName(253));
    assertSame(hostName(254));
    assertSame(hostName(252) + ".");
  }

  @Test
  void theLoopsAgreeWithTheRegularExpressionsOnGeneratedAndMutatedAddresses() {
    SplittableRandom random = new SplittableRandom(4291);
    String alphabet = "0123456789abcdefABCDEFgxz_-.:%[]/ ";
    List<String> valid = new ArrayList<>();
    for (String edge : EDGES) {
      if (RegexAddresses.outcome(edge).equals("ok")) {
        valid.add(edge);
      }
    }
    int accepted = 0;
    for (int i = 0; i < 200_000; i++) {
      String address = switch (random.nextInt(4)) {
        case 0 -> random(random, alphabet, random.nextInt(12));
        case 1 -> ipv4ish(random);
        case 2 -> ipv6ish(random);
        default -> mutate(random, valid.get(random.nextInt(valid.size())), alphabet);
      };
      if (assertSame(address)) {
        accepted++;
      }
    }
    assertThat(accepted).as("generated addresses that are valid (some must be, or this tests little)")
        .isGreaterThan(20_000);
  }

  /** Whether both accept it; fails if they differ in outcome or message. */
  private static boolean assertSame(String address) {
    String expected = RegexAddresses.outcome(address);
    String actual;
    try {
      Addresses.requireValid(address);
      actual = "ok";
    } catch (InvalidInputException e) {
      actual = "error " + e.getMessage();
    }
    assertThat(actual).as("address %s", address).isEqualTo(expected);
    return actual.equals("ok");
  }

  private static String hostName(int length) {
    StringBuilder b = new StringBuilder();
    while (b.length() < length) {
      if (b.length() > 0) {
        b.append('.');
      }
      b.append(label(Math.min(63, Math.max(1, length - b.length()))));
    }
    return b.substring(0, length);
  }

  private static String random(SplittableRandom random, String alphabet, int length) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < length; i++) {
      b.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return b.toString();
  }

  private static String ipv4ish(SplittableRandom random) {
    int parts = 3 + random.nextInt(3);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < parts; i++) {
      if (i > 0) {
        b.append('.');
      }
      int kind = random.nextInt(10);
      b.append(kind == 0 ? "0" + random.nextInt(10) : kind == 1 ? "" : String.valueOf(random.nextInt(300)));
    }
    return b.toString();
  }

  private static String ipv6ish(SplittableRandom random) {
    int parts = 1 + random.nextInt(9);
    StringBuilder b = new StringBuilder();
    boolean gap = random.nextInt(3) == 0;
    int gapAt = random.nextInt(parts + 1);
    for (int i = 0; i < parts; i++) {
      if (gap && i == gapAt) {
        b.append("::");
      } else if (i > 0) {
        b.append(':');
      }
      String hex = Integer.toHexString(random.nextInt(1 << 20));
      b.append(hex, 0, Math.min(random.nextInt(6), hex.length()));
    }
    if (gap && gapAt == parts) {
      b.append("::");
    }
    if (random.nextInt(4) == 0) {
      b.append(':').append(ipv4ish(random));
    }
    return b.toString();
  }

  private static String mutate(SplittableRandom random, String s, String alphabet) {
    StringBuilder b = new StringBuilder(s);
    int edits = 1 + random.nextInt(2);
    for (int e = 0; e < edits; e++) {
      int at = b.length() == 0 ? 0 : random.nextInt(b.length());
      char c = alphabet.charAt(random.nextInt(alphabet.length()));
      switch (random.nextInt(3)) {
        case 0 -> b.insert(at, c);
        case 1 -> {
          if (b.length() > 0) {
            b.deleteCharAt(at);
          }
        }
        default -> {
          if (b.length() > 0) {
            b.setCharAt(at, c);
          }
        }
      }
    }
    return b.toString();
  }

  /** The implementation before the loops, verbatim, as the oracle. */
  private static final class RegexAddresses {
    private static final Pattern HOST_LABEL = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?");
    private static final Pattern WITH_PORT = Pattern.compile("[^:]*:[0-9]+");
    private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");
    private static final Pattern DECIMAL_OCTET = Pattern.compile("0|[1-9][0-9]{0,2}");

    static String outcome(String address) {
      try {
        requireValid(address);
        return "ok";
      } catch (InvalidInputException e) {
        return "error " + e.getMessage();
      }
    }

    static String requireValid(String address) {
      String rule = Addresses.RULE;
      if (address == null || address.isBlank()) {
        throw new InvalidInputException("address", address, rule);
      }
      if (address.contains("://")) {
        throw new InvalidInputException("address", address, "remove the scheme; " + rule);
      }
      if (address.chars().anyMatch(Character::isWhitespace)) {
        throw new InvalidInputException("address", address, "remove the spaces; " + rule);
      }
      if (address.startsWith("[")) {
        throw new InvalidInputException("address", address, "write IPv6 literals without brackets; " + rule);
      }
      if (WITH_PORT.matcher(address).matches()) {
        throw new InvalidInputException("address", address, "remove the port; it goes in the port field; " + rule);
      }
      boolean valid = address.indexOf(':') >= 0 ? isIpv6(address) : isIpv4OrHostName(address);
      if (!valid) {
        throw new InvalidInputException("address", address, rule);
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
}
