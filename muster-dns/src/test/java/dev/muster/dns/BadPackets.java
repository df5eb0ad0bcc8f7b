package dev.muster.dns;

import java.util.Arrays;
import java.util.Random;

/** Malformed DNS packets made from a good query, for the fuzz tests of the responder and of the live sockets. */
public final class BadPackets {
  private BadPackets() {}

  /**
   * The {@code i}-th bad packet, cycling through five kinds: random bytes; the good query with a few bytes
   * flipped; cut short; grown with garbage and one of its four section counts changed; and the question's name a
   * compression pointer to itself (a loop).
   */
  public static byte[] mutate(byte[] good, Random random, int i) {
    byte[] p;
    switch (i % 5) {
      case 0 -> {
        p = new byte[random.nextInt(700)];
        random.nextBytes(p);
      }
      case 1 -> {
        p = good.clone();
        for (int k = 0; k < 1 + random.nextInt(5); k++) {
          p[random.nextInt(p.length)] = (byte) random.nextInt(256);
        }
      }
      case 2 -> p = Arrays.copyOf(good, random.nextInt(good.length));
      case 3 -> {
        p = Arrays.copyOf(good, 12 + random.nextInt(good.length * 2));
        p[4 + random.nextInt(8)] = (byte) random.nextInt(256); // QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT
      }
      default -> {
        p = good.clone();
        p[12] = (byte) 0xC0;
        p[13] = 12;
      }
    }
    return p;
  }
}
