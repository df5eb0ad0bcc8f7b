package dev.muster.bench.support;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the scale bench's watcher and provider JVMs print: JSON lines on one stream, one at a time, and, for a JVM
 * holding {@code caches} caches, a {@code seen} line once an instance id has reached every one of them, with the
 * wall-clock time (epoch µs, the same host clock as the bench's) at which the first and the last cache had it.
 *
 * <p>Thread-safe: caches mark arrivals from their own listener threads.
 */
public final class WatcherLines {
  private final PrintStream out;
  private final int caches;
  private final ConcurrentHashMap<String, Arrival> arrivals = new ConcurrentHashMap<>();

  /** When the first and the last cache had one id, and how many have it. */
  private static final class Arrival {
    final AtomicInteger count = new AtomicInteger();
    final AtomicLong first = new AtomicLong();
    final AtomicLong last = new AtomicLong();
  }

  public WatcherLines(PrintStream out, int caches) {
    this.out = out;
    this.caches = caches;
  }

  /** One cache has {@code id} at {@code atMicros}; prints {@code seen} when it is the last of them. */
  public void arrived(String id, long atMicros) {
    Arrival a = arrivals.computeIfAbsent(id, k -> new Arrival());
    a.first.compareAndSet(0, atMicros);
    a.last.accumulateAndGet(atMicros, Math::max);
    if (a.count.incrementAndGet() == caches) {
      line(JsonLog.entry("seen", Instant.now()).put("id", id).put("first_us", a.first.get())
          .put("last_us", a.last.get()));
    }
  }

  /**
   * Prints the {@code ready} line: every one of {@code caches} caches had its first set {@code readyNanos} after
   * the first was built, with used heap after GC before and after building them and the JVM's thread count.
   */
  public void ready(int caches, long readyNanos, long heapBefore, long heapAfter) {
    line(JsonLog.entry("ready", Instant.now()).put("caches", caches).put("ready_ms", readyNanos / 1_000_000)
        .put("heap_before", heapBefore).put("heap_after", heapAfter)
        .put("threads", ManagementFactory.getThreadMXBean().getThreadCount()));
  }

  /** Prints one line, whole, and flushes it. */
  public void line(ObjectNode node) {
    synchronized (out) {
      out.println(JsonLog.line(node));
      out.flush();
    }
  }

  /** Now, in microseconds since the epoch (the wall clock, which every process on this host shares). */
  public static long epochMicros() {
    return micros(Instant.now());
  }

  public static long micros(Instant t) {
    return t.getEpochSecond() * 1_000_000 + t.getNano() / 1_000;
  }
}
