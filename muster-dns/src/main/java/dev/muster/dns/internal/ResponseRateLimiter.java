package dev.muster.dns.internal;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Response rate limiting (RRL) as authoritative servers do it (BIND's {@code rate-limit}; Vixie and Schryver's
 * "DNS Response Rate Limiting"): the gateway cannot tell a real source from a spoofed one over UDP, so it bounds what
 * any one source prefix can receive, which bounds what a spoofer can reflect at a victim.
 *
 * <p>Two token buckets decide each UDP reply, before it is built:
 * <ul>
 *   <li>per response: one source prefix (an IPv4 /24, an IPv6 /56 by default) asking one question (the same name,
 *       compared without case, and type), {@code responsesPerSecond} a second with as many at once. A reflection
 *       attack repeats one question at its victim; a real client behind a caching resolver asks a name once a TTL;
 *   <li>per prefix: every reply to the prefix, whatever the question, {@code perSecond} with {@code burst} at once
 *       (BIND's {@code all-per-second}): an attacker who varies the names is bounded here.
 * </ul>
 * Over either, every {@code slip}-th query of that bucket gets an empty truncated reply no larger than the query
 * (TC=1: a real client asks again over TCP, which a spoofer cannot complete) and the others nothing.
 *
 * <p>Memory is bounded whatever the number of (spoofed) sources: each kind of bucket is a fixed array indexed by a
 * hash of its key, so two keys that share a slot share a bucket, which can only make the limit stricter for them.
 * What this does not bound: a flood from many prefixes (each under its limits) still costs the gateway CPU for every
 * query, and a flood spoofing a victim's prefix slows that prefix's real clients to TCP.
 *
 * <p>Thread-safe: each bucket is guarded by its own monitor (two UDP threads rarely meet on one).
 */
public final class ResponseRateLimiter {
  /** The verdict on one query. */
  public enum Verdict { ANSWER, SLIP, DROP }

  private static final int PREFIX_SLOTS = 4096; // powers of two
  private static final int RESPONSE_SLOTS = 16_384;
  private static final int HEADER = 12;

  private final double prefixPerNano;
  private final double prefixBurst;
  private final double responsePerNano;
  private final double responseBurst;
  private final int slip;
  private final int ipv4Prefix;
  private final int ipv6Prefix;
  private final Predicate<InetAddress> exempt;
  private final LongSupplier nanos;
  private final Bucket[] prefixBuckets;
  private final Bucket[] responseBuckets;

  private static final class Bucket {
    double tokens;
    long last;
    long over;
  }

  /**
   * @param perSecond replies a second to one prefix (0: no such limit)
   * @param burst replies above {@code perSecond} one prefix may get at once
   * @param responsesPerSecond replies a second to one prefix for one question, as many at once (0: no such limit)
   * @param slip every {@code slip}-th query over a limit is answered truncated (0: none)
   * @param exempt sources never limited
   */
  public ResponseRateLimiter(int perSecond, int burst, int responsesPerSecond, int slip, int ipv4Prefix,
      int ipv6Prefix, Predicate<InetAddress> exempt, LongSupplier nanos) {
    this.prefixPerNano = perSecond / 1e9;
    this.prefixBurst = burst;
    this.responsePerNano = responsesPerSecond / 1e9;
    this.responseBurst = responsesPerSecond;
    this.slip = slip;
    this.ipv4Prefix = ipv4Prefix;
    this.ipv6Prefix = ipv6Prefix;
    this.exempt = exempt;
    this.nanos = nanos;
    long now = nanos.getAsLong();
    this.prefixBuckets = perSecond == 0 ? null : buckets(PREFIX_SLOTS, burst, now);
    this.responseBuckets = responsesPerSecond == 0 ? null : buckets(RESPONSE_SLOTS, responsesPerSecond, now);
  }

  private static Bucket[] buckets(int slots, double full, long now) {
    Bucket[] out = new Bucket[slots];
    for (int i = 0; i < slots; i++) {
      out[i] = new Bucket();
      out[i].tokens = full;
      out[i].last = now;
    }
    return out;
  }

  /** The verdict on the query of {@code length} bytes of {@code packet} from {@code source}. */
  public Verdict admit(InetAddress source, byte[] packet, int length) {
    if ((prefixBuckets == null && responseBuckets == null) || exempt.test(source)) {
      return Verdict.ANSWER;
    }
    int prefix = prefixHash(source);
    long now = nanos.getAsLong();
    if (responseBuckets != null) {
      int h = mix(31 * prefix + questionHash(packet, length));
      Verdict v = take(responseBuckets[h & (RESPONSE_SLOTS - 1)], now, responsePerNano, responseBurst);
      if (v != Verdict.ANSWER) {
        return v;
      }
    }
    if (prefixBuckets != null) {
      return take(prefixBuckets[mix(prefix) & (PREFIX_SLOTS - 1)], now, prefixPerNano, prefixBurst);
    }
    return Verdict.ANSWER;
  }

  private Verdict take(Bucket b, long now, double perNano, double burst) {
    synchronized (b) {
      b.tokens = Math.min(burst, b.tokens + Math.max(0, now - b.last) * perNano);
      b.last = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return Verdict.ANSWER;
      }
      b.over++;
      return slip > 0 && b.over % slip == 0 ? Verdict.SLIP : Verdict.DROP;
    }
  }

  /** A hash of the source's first {@code ipv4Prefix} or {@code ipv6Prefix} bits. */
  int prefixHash(InetAddress source) {
    byte[] a = source.getAddress();
    int bits = source instanceof Inet4Address ? ipv4Prefix : ipv6Prefix;
    int h = bits;
    for (int i = 0; i < a.length && 8 * i < bits; i++) {
      int keep = Math.min(8, bits - 8 * i);
      h = 31 * h + (a[i] & (0xFF << (8 - keep)) & 0xFF);
    }
    return h;
  }

  /**
   * A hash of the question's name (ASCII letters folded to lower case: DNS names compare without case) and type, read
   * from the wire without parsing the message; the header alone when the question cannot be read.
   */
  static int questionHash(byte[] p, int length) {
    int end = questionEnd(p, length);
    if (end < 0) {
      return 0;
    }
    int h = 1;
    for (int i = HEADER; i < end - 2; i++) { // the name, its root label and the type; not the class
      int c = p[i] & 0xFF;
      h = 31 * h + (c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return h;
  }

  /**
   * Where the first question of a query ends (after its name, type and class), or -1 when the packet holds no
   * readable question: QDCOUNT not 1, a compressed or overlong name, or too few bytes.
   */
  static int questionEnd(byte[] p, int length) {
    if (length < HEADER + 5 || ((p[4] & 0xFF) << 8 | (p[5] & 0xFF)) != 1) {
      return -1;
    }
    int i = HEADER;
    while (i < length) {
      int len = p[i] & 0xFF;
      if (len == 0) {
        return i + 5 <= length ? i + 5 : -1; // the root label, then type and class
      }
      if ((len & 0xC0) != 0 || i - HEADER + len + 1 > 255) {
        return -1; // a query's own name is never compressed
      }
      i += len + 1;
    }
    return -1;
  }

  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x45d9f3b;
    h ^= h >>> 16;
    return h;
  }
}
