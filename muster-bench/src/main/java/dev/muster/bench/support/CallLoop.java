package dev.muster.bench.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A caller that makes one call every {@code interval} on its own thread (fixed rate; a call that overruns
 * delays the next one only, no catch-up burst) and remembers when each call started and whether it succeeded
 * as the caller saw it. The measuring thread then counts calls in a time window.
 *
 * <p>Thread-safe: the loop thread appends under the instance lock; readers copy under it. {@code call} runs on
 * the loop thread and must return within a bounded time (its own timeouts).
 */
public final class CallLoop implements AutoCloseable {
  private final Duration interval;
  private final BooleanSupplier call;
  private final List<long[]> calls = new ArrayList<>(); // {startNanos, ok ? 1 : 0}
  private final Thread thread;
  private volatile boolean running = true;
  private int inARow;

  /** How many calls started in a window, and how many of them failed. */
  public record Count(long calls, long failed) {}

  public CallLoop(Duration interval, BooleanSupplier call) {
    this.interval = interval;
    this.call = call;
    this.thread = new Thread(this::loop, "bench-caller");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  private void loop() {
    long next = System.nanoTime();
    while (running) {
      long start = System.nanoTime();
      boolean ok = call.getAsBoolean();
      synchronized (this) {
        calls.add(new long[] {start, ok ? 1 : 0});
        inARow = ok ? inARow + 1 : 0;
      }
      next = Math.max(next + interval.toNanos(), System.nanoTime());
      long wait = next - System.nanoTime();
      if (wait > 0) {
        try {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  public synchronized int successesInARow() {
    return inARow;
  }

  /** Calls started in [{@code fromNanos}, {@code toNanos}). */
  public synchronized Count count(long fromNanos, long toNanos) {
    long n = 0;
    long failed = 0;
    for (long[] c : calls) {
      if (c[0] - fromNanos >= 0 && c[0] - toNanos < 0) {
        n++;
        if (c[1] == 0) {
          failed++;
        }
      }
    }
    return new Count(n, failed);
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
