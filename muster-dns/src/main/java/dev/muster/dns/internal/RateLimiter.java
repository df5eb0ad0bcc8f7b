package dev.muster.dns.internal;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.function.LongSupplier;

/**
 * A token bucket per source: an IPv4 address, or an IPv6 /64 (one host usually holds a whole /64). The buckets are
 * a fixed array indexed by a hash of the source, so memory stays bounded however many sources (or spoofed ones)
 * arrive; two sources that share a slot share a bucket, which can only make the limit stricter for them.
 *
 * <p>Thread-safe: each bucket is guarded by its own monitor (two UDP threads rarely meet on one).
 */
public final class RateLimiter {
  /** The verdict on one query. */
  public enum Verdict { ANSWER, SLIP, DROP }

  private static final int SLOTS = 4096; // a power of two

  private final double perNano;
  private final double burst;
  private final int slip;
  private final LongSupplier nanos;
  private final Bucket[] buckets = new Bucket[SLOTS];

  private static final class Bucket {
    double tokens;
    long last;
    long over;
  }

  /** {@code perSecond} 0: every query is answered. */
  public RateLimiter(int perSecond, int burst, int slip, LongSupplier nanos) {
    this.perNano = perSecond / 1e9;
    this.burst = burst;
    this.slip = slip;
    this.nanos = nanos;
    long now = nanos.getAsLong();
    for (int i = 0; i < SLOTS; i++) {
      buckets[i] = new Bucket();
      buckets[i].tokens = burst;
      buckets[i].last = now;
    }
  }

  public Verdict admit(InetAddress source) {
    if (perNano == 0) {
      return Verdict.ANSWER;
    }
    Bucket b = buckets[slot(source)];
    long now = nanos.getAsLong();
    synchronized (b) {
      b.tokens = Math.min(burst, b.tokens + (now - b.last) * perNano);
      b.last = now;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return Verdict.ANSWER;
      }
      b.over++;
      return slip > 0 && b.over % slip == 0 ? Verdict.SLIP : Verdict.DROP;
    }
  }

  private static int slot(InetAddress source) {
    byte[] a = source.getAddress();
    int len = source instanceof Inet4Address ? 4 : Math.min(8, a.length); // IPv6: the /64
    int h = 0;
    for (int i = 0; i < len; i++) {
      h = 31 * h + a[i];
    }
    h ^= h >>> 16;
    h *= 0x45d9f3b;
    h ^= h >>> 16;
    return h & (SLOTS - 1);
  }
}
