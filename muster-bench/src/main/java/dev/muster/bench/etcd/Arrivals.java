package dev.muster.bench.etcd;

import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * When each of {@code consumers} consumers first saw each name ({@link System#nanoTime()}). The measuring
 * thread asks when the last of them did.
 *
 * <p>Thread-safe: consumers mark from their own threads (jetcd's executor, the caches' notifiers on the
 * delivery pool).
 */
final class Arrivals {
  private final int consumers;
  private final ConcurrentHashMap<String, AtomicLongArray> seen = new ConcurrentHashMap<>();

  Arrivals(int consumers) {
    this.consumers = consumers;
  }

  void mark(String name, int consumer) {
    long now = System.nanoTime();
    seen.computeIfAbsent(name, k -> new AtomicLongArray(consumers)).compareAndSet(consumer, 0, now);
  }

  /** The time the last consumer saw {@code name}, once all have. */
  OptionalLong allSeenAt(String name) {
    AtomicLongArray times = seen.get(name);
    if (times == null) {
      return OptionalLong.empty();
    }
    long last = 0;
    for (int i = 0; i < consumers; i++) {
      long t = times.get(i);
      if (t == 0) {
        return OptionalLong.empty();
      }
      last = Math.max(last, t);
    }
    return OptionalLong.of(last);
  }
}
