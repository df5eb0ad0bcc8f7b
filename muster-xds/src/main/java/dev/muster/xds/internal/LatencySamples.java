package dev.muster.xds.internal;

import dev.muster.xds.XdsPushLatency;
import java.time.Duration;
import java.util.Arrays;

/**
 * The last {@value #CAPACITY} latencies, in nanoseconds, in a ring; percentiles are exact over what it holds
 * (nearest rank). Thread-safe: each method holds this object's monitor for an array write or one copy and sort.
 */
final class LatencySamples {
  static final int CAPACITY = 1 << 16;
  private final long[] ring = new long[CAPACITY];
  private long added;

  synchronized void add(long nanos) {
    ring[(int) (added++ % CAPACITY)] = nanos;
  }

  synchronized void clear() {
    added = 0;
  }

  XdsPushLatency snapshot() {
    long[] copy;
    synchronized (this) {
      copy = Arrays.copyOf(ring, (int) Math.min(added, CAPACITY));
    }
    if (copy.length == 0) {
      return new XdsPushLatency(0, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }
    Arrays.sort(copy);
    return new XdsPushLatency(copy.length, Duration.ofNanos(rank(copy, 0.50)), Duration.ofNanos(rank(copy, 0.99)),
        Duration.ofNanos(copy[copy.length - 1]));
  }

  private static long rank(long[] sorted, double q) {
    return sorted[(int) Math.max(0, Math.ceil(q * sorted.length) - 1)];
  }
}
