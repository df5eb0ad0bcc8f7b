package dev.muster.dns;

import dev.muster.InvalidInputException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.xbill.DNS.Address;

/**
 * A block of IP addresses, {@code 10.0.0.0/8} or {@code fd00::/8}; a bare address is its own block ({@code /32},
 * {@code /128}). Used by {@link DnsConfig#allowFrom()} and {@link DnsConfig#rrlExempt()}. Immutable.
 *
 * @param network the block's first address (no bit set past {@code prefix})
 * @param prefix the number of leading bits that every address of the block shares with {@code network}
 */
public record Cidr(InetAddress network, int prefix) {
  public Cidr {
    Objects.requireNonNull(network, "network");
    int bits = network.getAddress().length * 8;
    if (prefix < 0 || prefix > bits) {
      throw new InvalidInputException("prefix", prefix, "use 0 to " + bits + " for " + network.getHostAddress());
    }
    if (!Arrays.equals(mask(network.getAddress(), prefix), network.getAddress())) {
      throw new InvalidInputException("cidr", network.getHostAddress() + "/" + prefix, "clear the bits past /"
          + prefix + ": did you mean " + of(network, prefix) + "?");
    }
  }

  /**
   * Parses {@code ADDRESS/PREFIX} or {@code ADDRESS}, IP literals only (no name is ever looked up).
   *
   * @throws InvalidInputException naming the text and what a valid one looks like
   */
  public static Cidr parse(String text) {
    String rule = "use an IP address or a block such as 10.0.0.0/8, 127.0.0.1 or fd00::/8";
    if (text == null || text.isBlank()) {
      throw new InvalidInputException("cidr", text, rule);
    }
    String t = text.trim();
    int slash = t.indexOf('/');
    InetAddress address;
    try {
      address = Address.getByAddress(slash < 0 ? t : t.substring(0, slash));
    } catch (UnknownHostException e) {
      throw new InvalidInputException("cidr", text, rule);
    }
    int bits = address.getAddress().length * 8;
    int prefix = bits;
    if (slash >= 0) {
      try {
        prefix = Integer.parseInt(t.substring(slash + 1));
      } catch (NumberFormatException e) {
        throw new InvalidInputException("cidr", text, rule);
      }
    }
    if (prefix < 0 || prefix > bits) {
      throw new InvalidInputException("cidr", text, "use a prefix of 0 to " + bits + " after the '/'");
    }
    return new Cidr(address, prefix);
  }

  /** Whether {@code address} is in this block; an address of the other family never is. */
  public boolean contains(InetAddress address) {
    byte[] a = address.getAddress();
    if (a.length != network.getAddress().length) {
      return false;
    }
    return Arrays.equals(mask(a, prefix), network.getAddress());
  }

  /** Whether any block of {@code blocks} holds {@code address}. */
  public static boolean anyContains(List<Cidr> blocks, InetAddress address) {
    for (Cidr c : blocks) {
      if (c.contains(address)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return network.getHostAddress() + "/" + prefix;
  }

  /** {@code address} with every bit past {@code prefix} cleared. */
  static byte[] mask(byte[] address, int prefix) {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int keep = Math.max(0, Math.min(8, prefix - 8 * i));
      out[i] &= (byte) (0xFF << (8 - keep));
    }
    return out;
  }

  private static String of(InetAddress address, int prefix) {
    try {
      return InetAddress.getByAddress(mask(address.getAddress(), prefix)).getHostAddress() + "/" + prefix;
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e); // a 4- or 16-byte array is always an address
    }
  }
}
